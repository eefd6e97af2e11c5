// Uses the small library in testdata/gen/lib (package org.example.lib, built into lib.jar)
// and keeps many library objects live. Used to test class-name recovery.
// Build and dump with: scripts/gendump.sh LibUser OUT.hprof   (see LIBUSER_OUT there)
// Compiled with -XDstringConcat=inline and written without lambdas, so that the program
// itself spins no hidden classes (whose names no jar or jmod could give back).
// Prints READY once the heap is built, then sleeps until killed.

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.example.lib.Box;
import org.example.lib.Config;
import org.example.lib.EventBus;
import org.example.lib.Level;
import org.example.lib.Matrix;
import org.example.lib.Node;
import org.example.lib.Registry;
import org.example.lib.Shapes;

public class LibUser {
    static final List<Object> KEEP = new ArrayList<>();
    static Holder HOLDER;

    /** The program's own classes: a static nested one ... */
    static class Holder {
        final Map<String, Object> byName = new HashMap<>();
        Node head;
        Config config;
        EventBus bus;
        Box<String> box;
        Level[] levels = Level.values();
    }

    /** ... and one extending a library class. */
    static class AppListener extends EventBus.Listener {
        String last;
        public void on(EventBus.Event e) { received++; last = e.topic; }
    }

    public static void main(String[] args) throws Exception {
        Holder h = new Holder();
        HOLDER = h;

        // a linked list of nodes, each with a few children and edges
        Node prev = null;
        for (int i = 0; i < 500; i++) {
            Node n = new Node(i, "n" + i);
            n.weight = i * 1000L;
            n.children = new Node[] {new Node(i * 10 + 1, null), new Node(i * 10 + 2, "c")};
            n.next = prev;
            prev = n;
            if (i % 5 == 0) {
                KEEP.add(new Node.Edge(n, n.children[0], i / 3f));
                KEEP.add(n.cursor());
            }
        }
        h.head = prev;

        // configuration entries and listeners
        Config cfg = new Config();
        cfg.level = Level.WARN;
        cfg.listen("audit");
        cfg.listen("metrics");
        for (int i = 0; i < 300; i++) {
            cfg.put("key." + i, i % 3 == 0 ? Integer.valueOf(i) : (Object) ("value-" + i));
        }
        h.config = cfg;

        // shapes of every kind
        for (int i = 0; i < 200; i++) {
            Shapes.AbstractShape s;
            switch (i % 3) {
                case 0: s = new Shapes.Circle(i * 0.5); break;
                case 1: s = new Shapes.Square(i); break;
                default: s = new Shapes.Triangle(3, 4, 5); break;
            }
            s.color = 0x00AA00 + i;
            s.filled = (i & 1) == 0;
            KEEP.add(s);
        }

        // boxes chained by version
        Box<String> box = new Box<>("v0");
        for (int i = 1; i < 100; i++) {
            box = box.with("v" + i);
        }
        h.box = box;

        // the registry's anonymous factories
        Registry reg = Registry.DEFAULT;
        for (int i = 0; i < 150; i++) {
            KEEP.add(reg.create(i % 2 == 0 ? "node" : "matrix", i));
        }
        reg.register("holder", h);
        KEEP.add(new Matrix(4, 4));

        // events and subscriptions
        EventBus bus = new EventBus();
        bus.subscribe("a", EventBus.counting());
        bus.subscribe("b", new AppListener());
        EventBus.Subscription tmp = bus.subscribe("c", EventBus.counting());
        for (int i = 0; i < 200; i++) {
            bus.publish(new EventBus.Event(i % 2 == 0 ? "a" : "b", 1_700_000_000_000L + i, Integer.valueOf(i)));
        }
        tmp.cancel();
        h.bus = bus;

        h.byName.put("cfg", cfg);
        h.byName.put("bus", bus);
        h.byName.put("levels", Level.values());

        System.out.println("READY");
        System.out.flush();
        while (HOLDER != null) {
            Thread.sleep(60_000);
        }
    }
}
