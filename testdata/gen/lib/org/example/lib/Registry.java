package org.example.lib;

import java.util.HashMap;
import java.util.Map;

/** A registry of factories, implemented with anonymous classes (Registry$1, Registry$2). */
public class Registry {
    public interface Factory {
        Object create(int i);
    }

    public static final Registry DEFAULT = new Registry();

    private final Map<String, Factory> factories = new HashMap<>();
    private final Map<String, Object> singletons = new HashMap<>();
    public int created;

    public Registry() {
        factories.put("node", new Factory() {
            public Object create(int i) { created++; return new Node(i, "node"); }
        });
        factories.put("matrix", new Factory() {
            public Object create(int i) { created++; return new Matrix(2 + i % 3, 2 + i % 2); }
        });
    }

    public Object create(String kind, int i) {
        Factory f = factories.get(kind);
        return f == null ? null : f.create(i);
    }

    public void register(String name, Object singleton) { singletons.put(name, singleton); }

    public Object lookup(String name) { return singletons.get(name); }
}
