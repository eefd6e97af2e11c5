package sun.misc;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;

/**
 * A stand-in for the sun.misc.Cleaner of Android's libcore (which JDK 9 and
 * later do not have), compiled into the JDK's jdk.unsupported module
 * (--patch-module), a module of the boot class loader: a phantom reference
 * that runs its thunk when its referent goes, kept in a list of all
 * cleaners. LeakCanary's Shark finds an object's native size through the
 * cleaner whose thunk is a NativeAllocationRegistry's.
 */
public class Cleaner extends PhantomReference<Object> {
    private static final ReferenceQueue<Object> dummyQueue = new ReferenceQueue<>();
    private static Cleaner first;

    private Cleaner next;
    private Cleaner prev;
    private final Runnable thunk;

    private Cleaner(Object referent, Runnable thunk) {
        super(referent, dummyQueue);
        this.thunk = thunk;
    }

    private static synchronized Cleaner add(Cleaner cl) {
        if (first != null) {
            cl.next = first;
            first.prev = cl;
        }
        first = cl;
        return cl;
    }

    /** Creates a cleaner that runs thunk once ob is phantom reachable. */
    public static Cleaner create(Object ob, Runnable thunk) {
        return thunk == null ? null : add(new Cleaner(ob, thunk));
    }
}
