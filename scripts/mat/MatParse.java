package org.eclipse.mat.parser.internal;

import java.io.File;
import java.lang.reflect.Field;
import java.util.HashMap;

import org.eclipse.mat.collect.HashMapIntObject;
import org.eclipse.mat.hprof.HprofHeapObjectReader;
import org.eclipse.mat.hprof.HprofIndexBuilder;
import org.eclipse.mat.parser.model.XGCRootInfo;
import org.eclipse.mat.parser.model.XSnapshotInfo;
import org.eclipse.mat.util.IProgressListener;

/**
 * What MAT's SnapshotFactoryImpl.parse (plugins/org.eclipse.mat.parser/src/org/eclipse/mat/parser/
 * internal/SnapshotFactoryImpl.java) does with the HPROF parser, without the extension registry
 * that finds the parser there (absent outside OSGi). It is in MAT's package because
 * PreliminaryIndexImpl and GarbageCleaner are package-private. MatSummary calls it.
 */
public final class MatParse
{
    private MatParse() {}

    /**
     * Parses dump with index files named prefix + "*.index", and returns the snapshot with its
     * dominator tree and the classes' minimum retained sizes computed, as MAT has it after opening
     * a dump with default options (unreachable objects removed, counted in the
     * UnreachableObjectsHistogram property of the SnapshotInfo).
     */
    public static SnapshotImpl parse(File dump, String prefix, IProgressListener listener) throws Exception
    {
        // plugins/org.eclipse.mat.hprof/plugin.xml: the parser extension "hprof" of the bundle
        // org.eclipse.mat.hprof, indexBuilder HprofIndexBuilder, objectReader HprofHeapObjectReader.
        HprofIndexBuilder indexBuilder = new HprofIndexBuilder();
        indexBuilder.init(dump, prefix);
        try
        {
            XSnapshotInfo snapshotInfo = new XSnapshotInfo();
            snapshotInfo.setPath(dump.getAbsolutePath());
            snapshotInfo.setPrefix(prefix);
            snapshotInfo.setProperty("$heapFormat", "hprof"); //$NON-NLS-1$ //$NON-NLS-2$
            PreliminaryIndexImpl idx = new PreliminaryIndexImpl(snapshotInfo);
            indexBuilder.fill(idx, listener);

            SnapshotImplBuilder builder = new SnapshotImplBuilder(idx.getSnapshotInfo());
            // no arguments: keep_unreachable_objects false, no discard_ratio
            int[] purgedMapping = GarbageCleaner.clean(idx, builder, new HashMap<String, String>(), listener);
            indexBuilder.clean(purgedMapping, listener);
            purgedMapping = null;

            // SnapshotImplBuilder.create(parser, listener), with the parser's object reader and
            // unique identifier ("org.eclipse.mat.hprof" + "." + "hprof") given here.
            // rootsPerThread is private in SnapshotImplBuilder, with no getter.
            Field f = SnapshotImplBuilder.class.getDeclaredField("rootsPerThread");
            f.setAccessible(true);
            @SuppressWarnings("unchecked")
            HashMapIntObject<HashMapIntObject<XGCRootInfo[]>> rootsPerThread =
                (HashMapIntObject<HashMapIntObject<XGCRootInfo[]>>) f.get(builder);
            SnapshotImpl snapshot = SnapshotImpl.create(builder.getSnapshotInfo(), "org.eclipse.mat.hprof.hprof", //$NON-NLS-1$
                            new HprofHeapObjectReader(), builder.classCache, builder.getRoots(), rootsPerThread,
                            builder.arrayObjects, builder.indexManager, listener);
            boolean done = false;
            try
            {
                snapshot.calculateDominatorTree(listener);
                snapshot.calculateMinRetainedHeapSizeForClasses(listener);
                done = true;
            }
            finally
            {
                if (!done)
                    snapshot.dispose();
            }
            return snapshot;
        }
        catch (Exception e)
        {
            indexBuilder.cancel();
            throw e;
        }
    }
}
