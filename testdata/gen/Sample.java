// A small but varied heap for HPROF parser/converter tests.
// Build and dump with: scripts/gendump.sh Sample OUT.hprof
// Prints READY once the heap is built, then sleeps until killed.

import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;

public class Sample {
    // ---- static fields of every type (plus references) ----
    static boolean sBoolean = true;
    static byte sByte = (byte) 0x7B;
    static char sChar = '\u00e9';
    static short sShort = (short) -12345;
    static int sInt = 0x01020304;
    static long sLong = 0x0102030405060708L;
    static float sFloat = 1.5f;
    static double sDouble = -2.25;
    static Object sObject;
    static String sString = "static string";
    static final int[] S_EMPTY = new int[0];
    static Sample ROOT;

    // ---- instance state: everything hangs off ROOT ----
    final Map<String, Person> people = new HashMap<>();
    final List<Shape> shapes = new ArrayList<>();
    final LinkedList<Object> linked = new LinkedList<>();
    final TreeMap<Integer, String> tree = new TreeMap<>();
    final Object[] misc = new Object[32];
    Counter counter;                 // non-static inner class (has this$0)
    Runnable anon;                   // anonymous class capturing state
    Comparator<Person> byAge;        // another anonymous class
    WeakReference<Person> weakToLive;     // referent strongly reachable too
    WeakReference<Object> weakToGarbage;  // referent only weakly reachable (cleared by the dump's GC)
    SoftReference<String> soft;
    String nonAscii = "Grüße aus Köln – Привет, мир! 你好，世界 \uD83C\uDF0D";
    String latin1 = "café naïve façade";
    Status status = Status.ACTIVE;
    Point point = new Point(3, -4);

    // ---- a class hierarchy with primitive and object fields of every type ----
    abstract static class Shape {
        static int created;          // static in a superclass
        final String name;
        boolean visible = true;
        byte layer = 3;
        char tag = 'S';
        short zIndex = -7;
        int id;
        long createdNanos = 1234567890123L;
        float scale = 0.75f;
        double area;
        Shape parent;

        Shape(String name) { this.name = name; this.id = ++created; }
        abstract double computeArea();
    }

    static class Circle extends Shape {
        static final double PI_ISH = 3.14159;
        double radius;
        Circle(double r) { super("circle"); radius = r; area = computeArea(); }
        double computeArea() { return PI_ISH * radius * radius; }
    }

    static class ColoredCircle extends Circle {
        static String defaultColor = "red";
        String color;
        int rgb;
        ColoredCircle(double r, String color, int rgb) { super(r); this.color = color; this.rgb = rgb; }
    }

    static class Rect extends Shape {
        int w, h;
        Rect(int w, int h) { super("rect"); this.w = w; this.h = h; area = computeArea(); }
        double computeArea() { return (double) w * h; }
    }

    /** All eight primitive types as instance fields, and one of each array type. */
    static class AllTypes {
        static boolean SB = false;
        static byte SBY = -1;
        static char SC = 'Z';
        static short SS = 32767;
        static int SI = Integer.MIN_VALUE;
        static long SL = Long.MAX_VALUE;
        static float SF = Float.NaN;
        static double SD = Double.NEGATIVE_INFINITY;
        static Object SO = "static object";

        boolean z = true;
        byte b = (byte) 0xAB;
        char c = '\u4e2d';
        short s = (short) 0xBEEF;
        int i = 0xCAFEBABE;
        long j = 0x0123456789ABCDEFL;
        float f = 6.02e23f;
        double d = 2.718281828459045;
        Object ref = this;
        Object nullRef = null;

        boolean[] za = {true, false, true};
        byte[] ba = {1, 2, 3, (byte) 0xFF};
        char[] ca = "chars".toCharArray();
        short[] sa = {1, -1, Short.MAX_VALUE};
        int[] ia = {10, 20, 30, 40};
        long[] ja = {Long.MIN_VALUE, 0, Long.MAX_VALUE};
        float[] fa = {0.1f, 0.2f};
        double[] da = {Math.PI, Math.E};
        Object[] oa = {"x", 1, 2L, null};
        String[] stra = {"alpha", "beta", "gamma"};
        int[][] grid = new int[3][4];
        Object[][] jagged = {{"a"}, {"b", "c"}, {}};
        long[][][] cube = new long[2][2][2];
        boolean[] emptyBooleans = new boolean[0];
    }

    static class Person {
        String name;
        int age;
        Person friend;
        List<String> tags = new ArrayList<>();
        Person(String name, int age) { this.name = name; this.age = age; }
    }

    record Point(int x, int y) { }

    enum Status { ACTIVE, SUSPENDED, CLOSED }

    interface Visitor { void visit(Object o); }

    /** Non-static inner class: has an implicit reference to its Sample. */
    class Counter {
        int count;
        void inc() { count++; }
        int total() { return count + people.size(); }
    }

    Sample() {
        for (int i = 0; i < 40; i++) {
            Person p = new Person("person-" + i, 20 + i % 50);
            p.tags.add("tag" + (i % 7));
            people.put(p.name, p);
        }
        for (int i = 1; i < 40; i++) {
            people.get("person-" + i).friend = people.get("person-" + (i - 1));
        }
        for (int i = 0; i < 10; i++) {
            shapes.add(new Circle(i + 0.5));
            shapes.add(new Rect(i, i + 1));
            Shape cc = new ColoredCircle(i, "color-" + i, 0x102030 * i);
            cc.parent = shapes.get(shapes.size() - 1);
            shapes.add(cc);
        }
        for (int i = 0; i < 20; i++) {
            linked.add(i % 2 == 0 ? Integer.valueOf(1000 + i) : "linked-" + i);
            tree.put(i * 3, "t" + i);
        }
        counter = new Counter();
        counter.inc();
        final int captured = 42;
        anon = new Runnable() {
            int runs;
            public void run() { runs += captured + counter.total(); }
        };
        anon.run();
        byAge = new Comparator<Person>() {
            public int compare(Person a, Person b) { return Integer.compare(a.age, b.age); }
        };
        Person keeper = people.get("person-7");
        weakToLive = new WeakReference<>(keeper);
        weakToGarbage = new WeakReference<>(new Object[] {"garbage"});
        soft = new SoftReference<>("softly held");
        misc[0] = new AllTypes();
        misc[1] = Long.valueOf(-987654321L);
        misc[2] = Double.valueOf(1.0 / 3);
        misc[3] = Character.valueOf('q');
        misc[4] = Boolean.TRUE;
        misc[5] = Short.valueOf((short) 321);
        misc[6] = Byte.valueOf((byte) -5);
        misc[7] = Float.valueOf(2.5f);
        misc[8] = new StringBuilder("builder-").append(12345);
        misc[9] = new Visitor() { public void visit(Object o) { sObject = o; } };
        misc[10] = Status.CLOSED;
        misc[11] = new int[][] {{1}, {2, 3}, null};
        misc[12] = misc; // self reference
        misc[13] = new ArrayList<>(List.of(1, 2, 3));
        sObject = shapes.get(0);
    }

    // ---- threads parked inside a few Java frames (JAVA_FRAME roots, stack traces) ----
    static final CountDownLatch NEVER = new CountDownLatch(1);

    static void parkedWorker(int depth, Object local, CountDownLatch started) throws InterruptedException {
        if (depth > 0) {
            Object[] frameLocal = {local, "depth-" + depth}; // a local only this frame holds
            parkedWorker(depth - 1, frameLocal, started);
            frameLocal[0] = null; // keep frameLocal alive across the call
            return;
        }
        started.countDown();
        NEVER.await();
    }

    public static void main(String[] args) throws Exception {
        ROOT = new Sample();
        int nThreads = 3;
        CountDownLatch started = new CountDownLatch(nThreads);
        for (int t = 0; t < nThreads; t++) {
            final int depth = 2 + t;
            Thread th = new Thread(new Runnable() {
                public void run() {
                    try {
                        parkedWorker(depth, "thread-local-" + depth, started);
                    } catch (InterruptedException e) {
                        // exit
                    }
                }
            }, "sample-worker-" + t);
            th.setDaemon(true);
            th.start();
        }
        started.await();
        String mainLocal = "main-frame-local"; // held by the main thread's frame
        System.out.println("READY");
        System.out.flush();
        while (mainLocal != null) {
            Thread.sleep(60_000);
        }
    }
}
