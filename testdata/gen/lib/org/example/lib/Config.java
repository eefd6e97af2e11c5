package org.example.lib;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Configuration with nested entry type, an inner listener class and an enum field. */
public class Config {
    public static final String VERSION = "1.2.3";
    public static int loaded;

    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private final List<Listener> listeners = new ArrayList<>();
    public Level level = Level.INFO;
    public double ratio = 0.5;
    public char separator = ';';
    public short retries = 3;
    public byte flags = 0x11;

    public static class Entry {
        public final String key;
        public Object value;
        public boolean enabled = true;
        public Entry(String key, Object value) { this.key = key; this.value = value; }
    }

    public class Listener {
        public final String name;
        public int notified;
        public Listener(String name) { this.name = name; }
        public void changed(Entry e) { notified++; if (level.loud()) { notified++; } }
    }

    public Config() { loaded++; }

    public Entry put(String key, Object value) {
        Entry e = new Entry(key, value);
        entries.put(key, e);
        for (Listener l : listeners) {
            l.changed(e);
        }
        return e;
    }

    public Listener listen(String name) {
        Listener l = new Listener(name);
        listeners.add(l);
        return l;
    }

    public int size() { return entries.size(); }
}
