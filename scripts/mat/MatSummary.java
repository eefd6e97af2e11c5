import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.eclipse.mat.hprof.HprofHeapObjectReader;
import org.eclipse.mat.parser.internal.MatParse;
import org.eclipse.mat.parser.internal.SnapshotImpl;
import org.eclipse.mat.snapshot.SnapshotInfo;
import org.eclipse.mat.snapshot.UnreachableObjectsHistogram;
import org.eclipse.mat.snapshot.model.GCRootInfo;
import org.eclipse.mat.snapshot.model.IArray;
import org.eclipse.mat.snapshot.model.IClass;
import org.eclipse.mat.snapshot.model.IObject;
import org.eclipse.mat.snapshot.model.IStackFrame;
import org.eclipse.mat.snapshot.model.IThreadStack;
import org.eclipse.mat.snapshot.model.PrettyPrinter;
import org.eclipse.mat.util.IProgressListener;

/**
 * Parses an HPROF file with Eclipse Memory Analyzer's parser the way MAT opens a dump
 * (SnapshotFactoryImpl.parse in plugins/org.eclipse.mat.parser, for the HPROF parser that
 * plugins/org.eclipse.mat.hprof/plugin.xml registers), without OSGi and without the parser
 * registry (MatParse.java, in MAT's package, does the steps): HprofIndexBuilder.init and fill into
 * a PreliminaryIndexImpl; GarbageCleaner.clean with no
 * arguments (MAT's default: unreachable objects are removed and counted in an
 * UnreachableObjectsHistogram); HprofIndexBuilder.clean; SnapshotImpl.create (what
 * SnapshotImplBuilder.create does, with the HprofHeapObjectReader the registry would make);
 * calculateDominatorTree and calculateMinRetainedHeapSizeForClasses (the retained sizes MAT's
 * histogram shows after parsing, as "&gt;= N"). The index files go to a temporary folder
 * (/tmp/mat-idx-*), deleted at the end. Then it prints a deterministic, sorted,
 * one-fact-per-line summary, so two outputs can be diffed.
 *
 * Usage: java -cp ... MatSummary DUMP.hprof
 *
 * Line kinds (first word): load, msg (MAT's warnings and errors to the user), info (the heap dump
 * overview), kinds, unreachable, class (histogram: per class object, by name), classdef, array,
 * root, refs, dom, domtop (top-level dominator tree objects by class), top20, stack (thread stacks),
 * frame (stack frames by text, in words: class, method, signature, location),
 * value (facts that depend on primitive field or array contents or on the texts of strings that
 * BMD drops or hashes by default).
 */
public class MatSummary
{
    static final List<String> out = new ArrayList<>();
    static final List<String> messages = new ArrayList<>();
    static String dumpPath = "", indexDir = "";

    static void p(String fmt, Object... args)
    {
        out.add(String.format(fmt, args));
    }

    /** Paths of the dump and of the index files, which differ from run to run, as words. */
    static String norm(String s)
    {
        if (s == null)
            return "null";
        if (!indexDir.isEmpty())
            s = s.replace(indexDir, "<index>");
        if (!dumpPath.isEmpty())
            s = s.replace(dumpPath, "<dump>");
        return s.replace('\n', ' ').replace('\r', ' ');
    }

    /** A progress listener that keeps MAT's messages to the user (warnings, errors in the summary). */
    static final class Listener implements IProgressListener
    {
        boolean canceled;

        public void beginTask(String name, int totalWork) {}
        public void done() {}
        public boolean isCanceled() { return canceled; }
        public void setCanceled(boolean value) { canceled = value; }
        public void subTask(String name) {}
        public void worked(int work) {}

        public void sendUserMessage(Severity severity, String message, Throwable exception)
        {
            String m = norm(message) + (exception == null ? "" : " (" + norm(exception.toString()) + ")");
            System.err.println("MAT " + severity + ": " + m);
            if (severity != Severity.INFO)
                messages.add("msg " + severity + " " + m);
        }
    }

    static final class Acc
    {
        long count, shallow, length, retained;
    }

    static void deleteTree(File f)
    {
        File[] kids = f.listFiles();
        if (kids != null)
            for (File k : kids)
                deleteTree(k);
        f.delete();
    }

    /**
     * Platform.inDebugMode() (org.eclipse.core.runtime, which Pass1Parser, SeekableStream and
     * ObjectMarkerOld call when they are made) reads the property osgi.debug from the
     * BundleContext that PlatformActivator keeps when the framework starts the bundle; outside
     * OSGi there is none, and it throws a NullPointerException. Give PlatformActivator a
     * BundleContext whose getProperty answers the system properties (osgi.debug is unset, so
     * debug mode is off, as in MAT by default) and whose every other method throws, so that
     * any further use of OSGi shows.
     */
    static void installBundleContext() throws ReflectiveOperationException
    {
        Class<?> bc = Class.forName("org.osgi.framework.BundleContext");
        Object context = java.lang.reflect.Proxy.newProxyInstance(MatSummary.class.getClassLoader(),
                        new Class<?>[] { bc }, (proxy, method, margs) -> {
                            if (method.getName().equals("getProperty") && margs != null && margs.length == 1)
                                return System.getProperty((String) margs[0]);
                            throw new UnsupportedOperationException("no OSGi framework: BundleContext."
                                            + method.getName());
                        });
        java.lang.reflect.Field f = Class.forName("org.eclipse.core.internal.runtime.PlatformActivator")
                        .getDeclaredField("context");
        f.setAccessible(true);
        f.set(null, context);
    }

    /**
     * MAT finds its parsers, name resolvers (class loader labels, String values), enhancers and
     * queries through the Eclipse extension registry, which OSGi fills from each bundle's
     * plugin.xml. Outside OSGi, make one the same way: an Equinox registry in its non-OSGi mode
     * (RegistryFactory.createRegistry; executable extensions are made with Class.forName and
     * newInstance), given the plugin.xml of the four plug-ins (build.sh copies them to
     * META-INF/mat-plugins/ in the classes) and made the default, which is what
     * Platform.getExtensionRegistry() answers. api's activator MATPlugin is not started by a
     * framework either: give it the ExtensionTracker its start() would make, as the registries of
     * api (ClassSpecificNameResolverRegistry...) read MATPlugin.getDefault().getExtensionTracker().
     */
    static void installExtensionRegistry() throws Exception
    {
        Object masterToken = new Object();
        final org.eclipse.core.runtime.IExtensionRegistry registry =
            org.eclipse.core.runtime.RegistryFactory.createRegistry(null, masterToken, null);
        for (String bundle : new String[] { "org.eclipse.mat.report", "org.eclipse.mat.api",
                        "org.eclipse.mat.parser", "org.eclipse.mat.hprof" })
        {
            String res = "/META-INF/mat-plugins/" + bundle + ".xml";
            try (java.io.InputStream in = MatSummary.class.getResourceAsStream(res))
            {
                if (in == null)
                    throw new IOException("no " + res + " in the class path (see build.sh)");
                if (!registry.addContribution(in, org.eclipse.core.runtime.ContributorFactorySimple
                                .createContributor(bundle), false, bundle, null, masterToken))
                    throw new IOException("extension registry: bad contribution " + res);
            }
        }
        org.eclipse.core.runtime.RegistryFactory.setDefaultRegistryProvider(() -> registry);

        org.eclipse.mat.internal.MATPlugin mat = new org.eclipse.mat.internal.MATPlugin();
        java.lang.reflect.Field tracker = mat.getClass().getDeclaredField("tracker");
        tracker.setAccessible(true);
        tracker.set(mat, new org.eclipse.core.runtime.dynamichelpers.ExtensionTracker(registry));
        java.lang.reflect.Field plugin = mat.getClass().getDeclaredField("plugin");
        plugin.setAccessible(true);
        plugin.set(null, mat);
    }

    public static void main(String[] args) throws Exception
    {
        installBundleContext();
        installExtensionRegistry();
        File dump = new File(args[0]).getAbsoluteFile();
        dumpPath = dump.getPath();
        Path tmp = Files.createTempDirectory(new File(System.getProperty("java.io.tmpdir")).toPath(), "mat-idx-");
        indexDir = tmp.toString();
        int status = 0;
        try
        {
            status = run(dump, tmp);
        }
        finally
        {
            deleteTree(tmp.toFile());
        }
        System.exit(status);
    }

    static int run(File dump, Path tmp) throws Exception
    {
        Listener listener = new Listener();
        String name = dump.getName();
        int dot = name.lastIndexOf('.');
        String prefix = new File(tmp.toFile(), (dot >= 0 ? name.substring(0, dot) : name) + ".").getPath();

        SnapshotImpl snapshot;
        long t0 = System.nanoTime();
        try
        {
            snapshot = MatParse.parse(dump, prefix, listener);
        }
        catch (Throwable t)
        {
            Throwable root = t;
            StringBuilder chain = new StringBuilder(norm(t.toString()));
            while (root.getCause() != null && root.getCause() != root)
            {
                root = root.getCause();
                chain.append(" <- ").append(norm(root.toString()));
            }
            System.out.println("load FAILED " + chain);
            for (String m : messages)
                System.out.println(m);
            t.printStackTrace();
            return 1;
        }
        System.err.printf("MatSummary: parse, garbage cleaning and dominator tree took %d ms%n",
                        (System.nanoTime() - t0) / 1000000);

        p("load ok");
        out.addAll(messages);
        summarize(snapshot);
        Collections.sort(out);
        PrintStream o = new PrintStream(System.out, false, "UTF-8");
        for (String s : out)
            o.println(s);
        o.flush();
        snapshot.dispose();
        System.err.printf("MatSummary: total %d ms%n", (System.nanoTime() - t0) / 1000000);
        return 0;
    }

    static void summarize(SnapshotImpl snapshot) throws Exception
    {
        // The heap dump overview (MAT's "Heap Dump Overview" / SnapshotInfo).
        SnapshotInfo info = snapshot.getSnapshotInfo();
        p("info hprof_version %s", info.getProperty(HprofHeapObjectReader.VERSION_PROPERTY));
        p("info identifier_size %d", info.getIdentifierSize());
        p("info compressed_oops %s", info.getProperty("$useCompressedOops"));
        p("info creation_date %s", info.getCreationDate() == null ? "-" : info.getCreationDate().getTime());
        p("info jvm_info %s", info.getJvmInfo());
        p("info objects %d", info.getNumberOfObjects());
        p("info classes %d", info.getNumberOfClasses());
        p("info class_loaders %d", info.getNumberOfClassLoaders());
        p("info gc_roots %d", info.getNumberOfGCRoots());
        p("info used_heap %d", info.getUsedHeapSize());

        // Unreachable objects GarbageCleaner removed (MAT's "Unreachable Objects Histogram").
        Object un = info.getProperty(UnreachableObjectsHistogram.class.getName());
        long unCount = 0, unShallow = 0;
        if (un instanceof UnreachableObjectsHistogram)
        {
            for (UnreachableObjectsHistogram.Record r : ((UnreachableObjectsHistogram) un).getRecords())
            {
                unCount += r.getObjectCount();
                unShallow += r.getShallowHeapSize();
                p("unreachable class %s count %d shallow %d", r.getClassName(), r.getObjectCount(),
                                r.getShallowHeapSize());
            }
        }
        p("unreachable removed_objects %d shallow %d", unCount, unShallow);

        // The histogram: one line per class object (two classes may share a name), with the
        // retained size MAT computed while parsing (calculateMinRetainedHeapSizeForClasses: the
        // class object and its instances, approximated as the sum over their top ancestors in the
        // dominator tree, shown as ">= N").
        Map<Integer, String> className = new HashMap<>();
        TreeMap<String, Acc> byName = new TreeMap<>();
        for (IClass c : snapshot.getClasses())
        {
            className.put(c.getObjectId(), c.getName());
            long retained = Math.abs(c.getRetainedHeapSizeOfObjects(false, true, null));
            p("class %s count %d shallow %d retained_min %d", c.getName(), c.getNumberOfObjects(),
                            ((org.eclipse.mat.parser.model.ClassImpl) c).getTotalSize(), retained);
            IClass sup = c.getSuperClass();
            String loader = "-";
            if (c.getClassLoaderId() >= 0)
            {
                IClass lc = snapshot.getClassOf(c.getClassLoaderId());
                loader = lc == null ? "?" : lc.getName();
            }
            p("classdef %s instance_size %d fields %d statics %d class_shallow %d super %s loader %s",
                            c.getName(), c.getHeapSizePerInstance(), c.getFieldDescriptors().size(),
                            c.getStaticFields().size(), snapshot.getHeapSize(c.getObjectId()),
                            sup == null ? "-" : sup.getName(), loader);
            Acc a = byName.computeIfAbsent(c.getName(), k -> new Acc());
            a.retained += retained;
        }
        // Top 20 class names by retained size; equal sizes share a rank (dense ranking), so
        // renamed classes with equal sizes do not reorder the list.
        List<Map.Entry<String, Acc>> list = new ArrayList<>(byName.entrySet());
        list.sort(Comparator.comparingLong((Map.Entry<String, Acc> e) -> -e.getValue().retained));
        int rank = 0;
        long prev = Long.MIN_VALUE;
        for (Map.Entry<String, Acc> e : list)
        {
            if (e.getValue().retained != prev)
            {
                rank++;
                prev = e.getValue().retained;
            }
            if (rank > 20)
                break;
            p("top20 %02d %d %s", rank, e.getValue().retained, e.getKey());
        }

        // Every object: kinds, arrays by array class, references, dominator tree.
        int n = info.getNumberOfObjects();
        long[] kinds = new long[5]; // instances, object arrays, primitive arrays, classes, loaders
        TreeMap<String, Acc> arrays = new TreeMap<>();
        TreeMap<String, Acc> domTop = new TreeMap<>();
        long outbound = 0, domTopCount = 0, domTopRetained = 0, retainedSum = 0;
        MessageDigest strings = MessageDigest.getInstance("SHA-256");
        List<String> stringValues = new ArrayList<>();
        long stringChars = 0;
        for (int id = 0; id < n; id++)
        {
            IClass c = snapshot.getClassOf(id);
            String cn = c == null ? "<no-class>" : c.getName();
            if (snapshot.isClass(id))
                kinds[3]++;
            else if (snapshot.isArray(id))
            {
                IArray a = (IArray) snapshot.getObject(id);
                boolean prim = a instanceof org.eclipse.mat.snapshot.model.IPrimitiveArray;
                kinds[prim ? 2 : 1]++;
                Acc acc = arrays.computeIfAbsent(cn, k -> new Acc());
                acc.count++;
                acc.length += a.getLength();
                acc.shallow += snapshot.getHeapSize(id);
            }
            else
                kinds[0]++;
            if (snapshot.isClassLoader(id))
                kinds[4]++;
            outbound += snapshot.getOutboundReferentIds(id).length;
            long retained = snapshot.getRetainedHeapSize(id);
            retainedSum += retained;
            if (snapshot.getImmediateDominatorId(id) == -1)
            {
                domTopCount++;
                domTopRetained += retained;
                Acc acc = domTop.computeIfAbsent(snapshot.isClass(id) ? "<class> " + className.get(id) : cn,
                                k -> new Acc());
                acc.count++;
                acc.retained += retained;
            }
            if (("java.lang.String".equals(cn)) && !snapshot.isClass(id))
            {
                String s = PrettyPrinter.objectAsString(snapshot.getObject(id), Integer.MAX_VALUE);
                if (s != null)
                {
                    stringValues.add(s);
                    stringChars += s.length();
                }
            }
        }
        p("kinds instances %d object_arrays %d primitive_arrays %d classes %d class_loaders %d",
                        kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]);
        for (Map.Entry<String, Acc> e : arrays.entrySet())
            p("array %s count %d total_length %d shallow %d", e.getKey(), e.getValue().count,
                            e.getValue().length, e.getValue().shallow);
        p("refs outbound_total %d", outbound);
        p("dom top_level %d retained_total %d", domTopCount, domTopRetained);
        p("dom sum_retained_all_objects %d", retainedSum);
        for (Map.Entry<String, Acc> e : domTop.entrySet())
            p("domtop %s count %d retained %d", e.getKey(), e.getValue().count, e.getValue().retained);

        Collections.sort(stringValues);
        for (String s : stringValues)
            strings.update((s + "\0").getBytes(StandardCharsets.UTF_8));
        p("value strings decoded %d total_chars %d contents_sha256 %s", stringValues.size(), stringChars,
                        hex(strings.digest()));

        // GC roots by MAT's root type: objects with a root of the type, and root records.
        TreeMap<String, long[]> roots = new TreeMap<>();
        long threads = 0, frames = 0, locals = 0;
        TreeMap<String, long[]> frameCount = new TreeMap<>();
        for (int id : snapshot.getGCRoots())
        {
            GCRootInfo[] ri = snapshot.getGCRootInfo(id);
            java.util.Set<String> types = new java.util.TreeSet<>();
            for (GCRootInfo r : ri)
            {
                String t = GCRootInfo.getTypeAsString(r.getType());
                long[] v = roots.computeIfAbsent(t, k -> new long[2]);
                v[1]++;
                types.add(t);
            }
            for (String t : types)
                roots.get(t)[0]++;
            IThreadStack stack = snapshot.getThreadStack(id);
            if (stack != null)
            {
                threads++;
                for (IStackFrame f : stack.getStackFrames())
                {
                    frames++;
                    locals += f.getLocalObjectsIds().length;
                    String k = frameWords(f.getText());
                    long[] v = frameCount.computeIfAbsent(k, x -> new long[2]);
                    v[0]++;
                    v[1] += f.getLocalObjectsIds().length;
                }
            }
        }
        for (Map.Entry<String, long[]> e : roots.entrySet())
            p("root %s objects %d records %d", e.getKey().replace(' ', '_'), e.getValue()[0], e.getValue()[1]);
        p("stack threads %d frames %d locals %d", threads, frames, locals);
        for (Map.Entry<String, long[]> e : frameCount.entrySet())
            p("frame %s count %d locals %d", e.getKey(), e.getValue()[0], e.getValue()[1]);
    }

    /**
     * A frame's text as Pass1Parser.StackFrame.toString makes it ("  at CLASS.METHOD SIGNATURE
     * (FILE:LINE)") in words: class, method, signature, source location; so that unhash can
     * put back each hashed name.
     */
    static String frameWords(String text)
    {
        // decrunch's placeholders for hashed names (unknown$ and 16 hex digits) carry no '(':
        // a hashed method name is followed by its hashed signature
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "\\s*at (.*?)\\.(unknown\\$[0-9a-f]{16}|[^.(]*)(\\(\\S*|unknown\\$[0-9a-f]{16}) \\((.*)\\)")
                        .matcher(text);
        if (!m.matches())
            return text.trim();
        return m.group(1) + " " + m.group(2) + " " + m.group(3) + " " + m.group(4).replace(':', ' ');
    }

    static String hex(byte[] d)
    {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++)
            sb.append(String.format("%02x", d[i]));
        return sb.toString();
    }
}
