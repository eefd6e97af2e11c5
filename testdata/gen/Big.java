// Builds a large, realistic object graph for benchmarks.
//   java Big SIZE_MB      (default 200)
// SIZE_MB is the target size of the resulting HPROF dump in MB (10^6 bytes): the program
// keeps a running estimate of how many bytes each object it keeps will take in the dump
// (an INSTANCE_DUMP / OBJ_ARRAY_DUMP / PRIM_ARRAY_DUMP record) and stops when the estimate
// plus a fixed allowance for the JDK's own objects and classes reaches the target.
// The mix (entities with names, boxed numbers, small reference arrays, HashMaps and some
// primitive arrays) averages about 57 dump bytes per object, i.e. about 17.5 million objects
// per GB of dump, so a 1300 MB dump holds about 23 million objects.
// The graph is deterministic (fixed random seed). Prints statistics on stderr, then READY
// on stdout, then sleeps until killed.
// Build and dump with: scripts/gendump.sh Big OUT.hprof SIZE_MB   (or scripts/genbig.sh)

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

public class Big {
    static final int ID = "32".equals(System.getProperty("sun.arch.data.model")) ? 4 : 8;
    // record sizes in the dump (HotSpot's HPROF writer)
    static final int INSTANCE_HDR = 1 + ID + 4 + ID + 4;
    static final int OBJARR_HDR = 1 + ID + 4 + 4 + ID;
    static final int PRIMARR_HDR = 1 + ID + 4 + 4 + 1;
    /** The JDK's own live objects, classes, names and roots in a small program's dump. */
    static final long BASELINE_BYTES = 3_400_000L;
    static final int DEPT_SIZE = 1000;

    static final String[] ATTR_KEYS = {"region", "tier", "flag", "owner", "status", "origin"};
    static final String[] WORDS = {
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
        "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa",
    };

    /** The graph's main node type. */
    static final class Entity {
        long id;
        int kind;
        double score;
        boolean active;
        String name;
        Entity parent;
        Object[] links;
        Object payload;
        Map<String, Object> attrs;
    }

    /** Groups entities; holds an ArrayList of them. */
    static final class Department {
        final String code;
        final List<Entity> members = new ArrayList<>(DEPT_SIZE);
        Department manager;
        int budget;
        Department(String code) { this.code = code; }
    }

    static Department[] DEPARTMENTS;
    static long objects;
    static long dumpBytes;

    static void inst(int fieldBytes) { objects++; dumpBytes += INSTANCE_HDR + fieldBytes; }
    static void objArr(int n) { objects++; dumpBytes += OBJARR_HDR + (long) n * ID; }
    static void primArr(int n, int elemSize) { objects++; dumpBytes += PRIMARR_HDR + (long) n * elemSize; }
    /** A non-interned LATIN1 String and its byte[] value. */
    static String str(String s) {
        inst(ID + 4 + 1 + 1);          // value, hash, coder, hashIsZero
        primArr(s.length(), 1);
        return s;
    }

    public static void main(String[] args) throws Exception {
        long targetMb = args.length > 0 ? Long.parseLong(args[0]) : 200;
        long target = targetMb * 1_000_000L - BASELINE_BYTES;
        long t0 = System.nanoTime();
        SplittableRandom rnd = new SplittableRandom(0x5EEDL);

        int maxDepts = (int) Math.max(16, target / (DEPT_SIZE * 300L) * 2);
        Department[] depts = new Department[maxDepts];
        DEPARTMENTS = depts;
        objArr(maxDepts);
        int nDepts = 0;
        long nextId = 1;
        Department dept = null;

        while (dumpBytes < target) {
            if (dept == null || dept.members.size() == DEPT_SIZE) {
                if (nDepts == depts.length) {
                    throw new IllegalStateException("department table too small");
                }
                dept = new Department(str("D-" + nDepts));
                dept.budget = rnd.nextInt(1_000_000);
                dept.manager = nDepts > 0 ? depts[rnd.nextInt(nDepts)] : null;
                depts[nDepts++] = dept;
                inst(ID * 3 + 4);                 // Department
                inst(ID + 8);                     // ArrayList
                objArr(DEPT_SIZE);                // its elementData
            }

            Entity e = new Entity();
            inst(8 + 4 + 8 + 1 + 5 * ID);
            e.id = nextId++;
            e.kind = rnd.nextInt(12);
            e.score = rnd.nextDouble() * 100;
            e.active = rnd.nextInt(10) != 0;
            e.name = str(new StringBuilder(24).append(WORDS[rnd.nextInt(WORDS.length)]).append('-')
                    .append(e.id).append('-').append(WORDS[rnd.nextInt(WORDS.length)]).toString());

            // links to random earlier entities (cross-department references)
            int nLinks = 1 + rnd.nextInt(4);
            Object[] links = new Object[nLinks];
            objArr(nLinks);
            for (int k = 0; k < nLinks; k++) {
                Department d = depts[rnd.nextInt(nDepts)];
                int size = d.members.size();
                if (size > 0) {
                    links[k] = d.members.get(rnd.nextInt(size));
                }
            }
            e.links = links;
            int size = dept.members.size();
            e.parent = size > 0 ? dept.members.get(rnd.nextInt(size)) : null;

            switch ((int) (e.id & 3)) {
                case 0: e.payload = Long.valueOf(rnd.nextLong()); inst(8); break;
                case 1: e.payload = Double.valueOf(rnd.nextDouble()); inst(8); break;
                case 2: e.payload = Integer.valueOf(1000 + rnd.nextInt(1 << 30)); inst(4); break;
                default: {
                    int[] v = new int[4 + rnd.nextInt(8)];
                    for (int k = 0; k < v.length; k++) {
                        v[k] = rnd.nextInt();
                    }
                    e.payload = v;
                    primArr(v.length, 4);
                }
            }

            if (rnd.nextInt(5) == 0) {
                // a small HashMap: map, table, 3 entries, a String and an Integer value
                Map<String, Object> attrs = new HashMap<>(4);
                inst(4 * ID + 16);
                objArr(4);
                attrs.put(ATTR_KEYS[rnd.nextInt(2)], str(WORDS[rnd.nextInt(WORDS.length)] + "/" + e.kind));
                attrs.put(ATTR_KEYS[2 + rnd.nextInt(2)], Integer.valueOf(1000 + rnd.nextInt(100000)));
                inst(4);
                attrs.put(ATTR_KEYS[4 + rnd.nextInt(2)], Boolean.valueOf(e.active));
                inst(3 * ID + 4);
                inst(3 * ID + 4);
                inst(3 * ID + 4);
                e.attrs = attrs;
            }

            if (rnd.nextInt(6) == 0) {
                // some bulk data: a byte[] or double[]
                if (rnd.nextBoolean()) {
                    byte[] b = new byte[64 + rnd.nextInt(577)];
                    rnd.nextBytes(b);
                    e.payload = new Object[] {e.payload, b};
                    objArr(2);
                    primArr(b.length, 1);
                } else {
                    double[] d = new double[8 + rnd.nextInt(73)];
                    for (int k = 0; k < d.length; k++) {
                        d[k] = rnd.nextDouble();
                    }
                    e.payload = new Object[] {e.payload, d};
                    objArr(2);
                    primArr(d.length, 8);
                }
            }
            dept.members.add(e);
        }

        double secs = (System.nanoTime() - t0) / 1e9;
        System.err.printf("Big: target %d MB: kept %d objects (%d entities, %d departments), "
                + "estimated dump size %.1f MB (+%.1f MB JDK baseline), %.1f objects per GB of dump, built in %.1f s%n",
                targetMb, objects, nextId - 1, nDepts, dumpBytes / 1e6, BASELINE_BYTES / 1e6,
                objects / ((dumpBytes + BASELINE_BYTES) / 1e9), secs);
        System.out.println("READY");
        System.out.flush();
        while (DEPARTMENTS != null) {
            Thread.sleep(60_000);
        }
    }
}
