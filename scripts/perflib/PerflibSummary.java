import com.android.tools.perflib.captures.MemoryMappedFileBuffer;
import com.android.tools.perflib.heap.ArrayInstance;
import com.android.tools.perflib.heap.ClassInstance;
import com.android.tools.perflib.heap.ClassObj;
import com.android.tools.perflib.heap.Heap;
import com.android.tools.perflib.heap.Instance;
import com.android.tools.perflib.heap.RootObj;
import com.android.tools.perflib.heap.Snapshot;
import com.android.tools.perflib.heap.Type;
import com.android.tools.proguard.ProguardMap;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Loads an HPROF file with perflib the way Android Studio's memory profiler does
 * (Snapshot.createSnapshot over a MemoryMappedFileBuffer with an empty ProguardMap, then
 * computeDominators, which resolves references and computes retained sizes) and prints a
 * deterministic, sorted, one-fact-per-line summary, so two outputs can be diffed.
 *
 * Usage: java -cp ... PerflibSummary DUMP.hprof [--no-dominators]
 *
 * Line kinds (first word): load, heap, class, classdef, array, root, refs, dom, retained, top20,
 * value (facts that depend on primitive field/array contents, which BMD drops by design).
 */
public class PerflibSummary {
    static final List<String> out = new ArrayList<>();

    static void p(String fmt, Object... args) {
        out.add(String.format(fmt, args));
    }

    static final class Tee extends OutputStream {
        final OutputStream a, b;
        Tee(OutputStream a, OutputStream b) { this.a = a; this.b = b; }
        @Override public void write(int c) throws java.io.IOException { a.write(c); b.write(c); }
        @Override public void write(byte[] buf, int off, int len) throws java.io.IOException {
            a.write(buf, off, len); b.write(buf, off, len);
        }
        @Override public void flush() throws java.io.IOException { a.flush(); b.flush(); }
    }

    static final class Acc {
        long count, shallow, length, retained, nativeSize;
    }

    public static void main(String[] args) throws Exception {
        String path = args[0];
        boolean dominators = !(args.length > 1 && args[1].equals("--no-dominators"));

        // HprofParser.parse() catches every exception and only printStackTrace()s it, then goes
        // on with what it has; catch that on stderr so a partial load is reported.
        PrintStream realErr = System.err;
        ByteArrayOutputStream errBuf = new ByteArrayOutputStream();
        System.setErr(new PrintStream(new Tee(realErr, errBuf), true));

        Snapshot snapshot;
        try {
            snapshot = Snapshot.createSnapshot(new MemoryMappedFileBuffer(new File(path)), new ProguardMap());
        } catch (Throwable t) {
            System.out.println("load FAILED createSnapshot threw " + t);
            t.printStackTrace(realErr);
            System.exit(1);
            return;
        }
        String parseErr = errBuf.toString(StandardCharsets.UTF_8.name());
        if (!parseErr.isEmpty()) {
            String first = parseErr.split("\n", 2)[0];
            p("load PARSE_ERROR (swallowed by HprofParser, snapshot is partial): %s", first);
        } else {
            p("load ok");
        }
        p("load id_size_mask %x", snapshot.getIdSizeMask());

        // Per heap: instances by kind, shallow size, arrays.
        List<Heap> heaps = new ArrayList<>(snapshot.getHeaps());
        Map<Integer, String> heapName = new HashMap<>();
        for (Heap h : heaps) heapName.put(h.getId(), h.getName());

        final List<Instance> all = new ArrayList<>();
        for (Heap h : heaps) {
            final long[] kinds = new long[4]; // classInst, objArray, primArray, noClass
            final long[] shallow = new long[1];
            final long[] nativeSize = new long[1];
            final TreeMap<String, Acc> arrays = new TreeMap<>();
            h.forEachInstance(inst -> {
                all.add(inst);
                shallow[0] += inst.getSize();
                nativeSize[0] += inst.getNativeSize();
                if (inst instanceof ArrayInstance) {
                    ArrayInstance a = (ArrayInstance) inst;
                    kinds[a.getArrayType() == Type.OBJECT ? 1 : 2]++;
                    Acc acc = arrays.computeIfAbsent(a.getArrayType().name(), k -> new Acc());
                    acc.count++;
                    acc.length += a.getLength();
                    acc.shallow += a.getSize();
                } else if (inst instanceof ClassInstance) {
                    kinds[0]++;
                }
                if (inst.getClassObj() == null) kinds[3]++;
                return true;
            });
            long classObjSize = 0;
            for (ClassObj c : h.getClasses()) classObjSize += c.getSize();
            p("heap %s id %d", h.getName(), h.getId());
            p("heap %s classes %d", h.getName(), h.getClasses().size());
            p("heap %s instances %d", h.getName(), h.getInstancesCount());
            p("heap %s class_instances %d", h.getName(), kinds[0]);
            p("heap %s object_arrays %d", h.getName(), kinds[1]);
            p("heap %s primitive_arrays %d", h.getName(), kinds[2]);
            p("heap %s instances_without_class %d", h.getName(), kinds[3]);
            p("heap %s shallow_size %d", h.getName(), shallow[0]);
            p("heap %s class_objects_size %d", h.getName(), classObjSize);
            p("value heap %s native_size %d", h.getName(), nativeSize[0]);
            for (Map.Entry<String, Acc> e : arrays.entrySet()) {
                Acc a = e.getValue();
                p("array %s %s count %d total_length %d shallow %d", h.getName(), e.getKey(),
                        a.count, a.length, a.shallow);
            }
        }

        // Per class name: definitions and, per heap of the instances, count and shallow size.
        TreeMap<String, Acc> perClassHeap = new TreeMap<>();
        TreeMap<String, List<String>> defs = new TreeMap<>();
        for (Heap h : heaps) {
            for (ClassObj c : h.getClasses()) {
                String name = c.getClassName();
                ClassObj sup = c.getSuperClassObj();
                defs.computeIfAbsent(name + " " + h.getName(), k -> new ArrayList<>()).add(String.format(
                        "instance_size %d fields %d statics %d class_object_size %d super %s",
                        c.getInstanceSize(), c.getFields().length,
                        c.getStaticFieldValues().size(), c.getSize(),
                        sup == null ? "-" : sup.getClassName()));
                for (Heap ih : heaps) {
                    int n = c.getHeapInstancesCount(ih.getId());
                    if (n == 0) continue;
                    Acc acc = perClassHeap.computeIfAbsent(ih.getName() + " " + name, k -> new Acc());
                    acc.count += n;
                    acc.shallow += c.getShallowSize(ih.getId());
                }
            }
        }
        for (Map.Entry<String, List<String>> e : defs.entrySet()) {
            Collections.sort(e.getValue());
            for (String d : e.getValue()) {
                // name first (after "classdef") so unhash can see it as a token
                String[] nh = e.getKey().split(" ");
                p("classdef %s %s %s", nh[1], nh[0], d);
            }
        }
        for (Map.Entry<String, Acc> e : perClassHeap.entrySet()) {
            String[] hn = e.getKey().split(" ", 2);
            p("class %s %s count %d shallow %d", hn[0], hn[1], e.getValue().count, e.getValue().shallow);
        }

        // GC roots by type (and heap they were reported in), and how many point nowhere.
        TreeMap<String, long[]> roots = new TreeMap<>();
        for (RootObj r : snapshot.getGCRoots()) {
            String k = r.getHeap().getName() + " " + r.getRootType().name();
            long[] v = roots.computeIfAbsent(k, x -> new long[2]);
            v[0]++;
            if (r.getReferredInstance() == null) v[1]++;
        }
        for (Map.Entry<String, long[]> e : roots.entrySet()) {
            p("root %s count %d unresolved %d", e.getKey(), e.getValue()[0], e.getValue()[1]);
        }

        // Strings as perflib decodes them (depends on char/byte array contents and the
        // count/offset int fields: primitive values).
        // Android dumps name it java.lang.String; HotSpot dumps java/lang/String.
        List<ClassObj> stringClasses = new ArrayList<>(snapshot.findClasses("java.lang.String"));
        stringClasses.addAll(snapshot.findClasses("java/lang/String"));
        if (!stringClasses.isEmpty()) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            long decodable = 0, chars = 0, nonEmpty = 0;
            List<String> all_s = new ArrayList<>();
            for (ClassObj stringClass : stringClasses)
            for (Instance i : stringClass.getInstancesList()) {
                String s = ((ClassInstance) i).getAsString();
                if (s != null) {
                    decodable++;
                    chars += s.length();
                    if (!s.isEmpty() && s.chars().anyMatch(ch -> ch != 0)) nonEmpty++;
                    all_s.add(s);
                }
            }
            Collections.sort(all_s);
            for (String s : all_s) md.update((s + "\0").getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder();
            for (byte b : md.digest()) hex.append(String.format("%02x", b));
            p("value strings decodable %d total_chars %d with_nonzero_chars %d contents_sha256 %s",
                    decodable, chars, nonEmpty, hex.substring(0, 16));
        }

        if (dominators) {
            long t0 = System.nanoTime();
            snapshot.computeDominators();
            long ms = (System.nanoTime() - t0) / 1000000;
            System.err.println("computeDominators took " + ms + " ms");

            // References (resolved by computeDominators -> resolveReferences).
            long hard = 0, soft = 0, revHard = 0, revSoft = 0, reachable = 0;
            List<Instance> withClasses = new ArrayList<>(all);
            for (Heap h : heaps) withClasses.addAll(h.getClasses());
            for (Instance i : withClasses) {
                hard += i.getHardForwardReferences().size();
                if (i.getSoftForwardReference() != null) soft++;
                revHard += i.getHardReverseReferences().size();
                if (i.getSoftReverseReferences() != null) revSoft += i.getSoftReverseReferences().size();
                if (i.isReachable()) reachable++;
            }
            p("refs hard_forward %d soft_forward %d hard_reverse_dedup %d soft_reverse_dedup %d",
                    hard, soft, revHard, revSoft);
            p("dom reachable_instances_incl_classes %d", reachable);
            p("dom reachable_instances_with_dominator %d", snapshot.getReachableInstances().size());

            // Retained sizes: dominator-tree roots (immediate dominator = sentinel) summed, and
            // per class name the sum over its instances.
            long domRoots = 0, domRootsRetained = 0, totalDistance = 0;
            TreeMap<String, Acc> retained = new TreeMap<>();
            for (Instance i : withClasses) {
                if (i.getImmediateDominator() == Snapshot.SENTINEL_ROOT) {
                    domRoots++;
                    domRootsRetained += i.getTotalRetainedSize();
                }
                if (i.isReachable()) totalDistance += i.getDistanceToGcRoot();
                if (i instanceof ClassObj) continue;
                ClassObj c = i.getClassObj();
                String name = c == null ? "<no-class>" : c.getClassName();
                Acc acc = retained.computeIfAbsent(name, k -> new Acc());
                acc.count++;
                acc.retained += i.getTotalRetainedSize();
            }
            p("dom dominator_tree_roots %d retained_total %d", domRoots, domRootsRetained);
            p("dom sum_distance_to_gc_root %d", totalDistance);
            for (Map.Entry<String, Acc> e : retained.entrySet()) {
                p("retained %s %d", e.getKey(), e.getValue().retained);
            }
            // Top 20 class names by retained size; equal sizes share a rank (dense ranking),
            // so renamed classes with equal sizes do not reorder the list.
            List<Map.Entry<String, Acc>> list = new ArrayList<>(retained.entrySet());
            list.sort((a, b) -> Long.compare(b.getValue().retained, a.getValue().retained));
            int rank = 0;
            long prev = Long.MIN_VALUE;
            for (Map.Entry<String, Acc> e : list) {
                if (e.getValue().retained != prev) {
                    rank++;
                    prev = e.getValue().retained;
                }
                if (rank > 20) break;
                p("top20 %02d %d %s", rank, e.getValue().retained, e.getKey());
            }
        }

        Collections.sort(out);
        for (String s : out) System.out.println(s);
        System.out.flush();
        snapshot.dispose();
    }
}
