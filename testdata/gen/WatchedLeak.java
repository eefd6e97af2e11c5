package com.example.watched;

import android.app.Activity;
import android.app.ActivityThread;
import android.graphics.Bitmap;
import android.os.Looper;
import androidx.compose.runtime.CompositionImpl;
import java.util.ArrayList;
import java.util.List;
import leakcanary.KeyedWeakReference;
import leakcanary.ObjectWatcher;

/**
 * A debug build's app with LeakCanary and Compose, as it runs out of
 * memory: LeakCanary watches the objects whose life ended, and the heap
 * holds its KeyedWeakReferences and Compose's compositions, whose state
 * LeakCanary's Shark reads to decide what leaks (the primitive fields of
 * libraries the app bundles). Its heap runs on HotSpot with stand-ins for
 * android.app.Activity, android.app.ActivityThread, android.os.Build and
 * android.os.Looper (the boot class path) and for
 * LeakCanary's KeyedWeakReference and ObjectWatcher and Compose's
 * CompositionImpl (the app's jar, as its APK holds them).
 *
 * - A destroyed activity held by its disposed composition, which a static
 *   field keeps: the leak. Shark marks the composition leaking by its
 *   disposed flag, so the leak's suspect reference is the static field.
 * - A composition in use, not disposed, of the activity in use.
 * - Three watched objects: the destroyed activity and a cart model, found
 *   retained (retainedUptimeMillis set), and a presenter watched a moment
 *   ago, not yet retained (-1), which the app still holds: Shark reports
 *   the cart as a leak and not the presenter.
 */
public class WatchedLeak {
    /** The leak: the last composition shown, kept after its activity went. */
    static CompositionImpl lastComposition;

    /** The composition in use. */
    static CompositionImpl current;

    /** LeakCanary's watcher. */
    static final ObjectWatcher watcher = new ObjectWatcher();

    /** Objects the app holds on purpose: the presenter, still in use. */
    static final List<Object> held = new ArrayList<>();

    /** The activity that hosts the app's compositions. */
    public static class ComposeActivity extends Activity {
        final byte[] state = new byte[1024];
        /** Its header image: 400 x 300 pixels in native memory, 480,000 bytes. */
        final Bitmap header = Bitmap.createBitmap(400, 300);
    }

    /** A composable's content: it holds its activity. */
    public static class Content {
        final Activity activity;

        Content(Activity activity) {
            this.activity = activity;
        }
    }

    /** A cart's model, cleared when the cart screen went. */
    public static class CartModel {
        final long[] totals = new long[64];
    }

    /** A screen's presenter. */
    public static class Presenter {
        final StringBuilder title = new StringBuilder("inbox");
    }

    /** The uptime, in milliseconds, at which the heap is dumped. */
    static final long DUMP_UPTIME = 7_200_000L;

    public static void main(String[] args) throws Exception {
        Class.forName("android.os.Build", true, null);
        Class.forName("android.os.Build$VERSION", true, null);
        // An app's main thread, whose locals Shark ignores: decrunch names it
        // "main" again by Looper.sMainLooper.
        Looper.prepareMainLooper();
        // The app's process: its name is a String, which decrunch writes
        // back from the label ApplicationInfo.processName.
        ActivityThread.bindApplication("com.example.watched", "com.example.watched");
        ComposeActivity gone = new ComposeActivity();
        gone.performCreate("Cart");
        CompositionImpl composition = new CompositionImpl(new Object());
        composition.setContent(new Content(gone));
        lastComposition = composition;
        gone.finish(0);
        gone.performDestroy();
        composition.dispose();
        KeyedWeakReference ref = watcher.watch(gone, "2f7c3a9e-1b4d-4c8e-9a60-5d3e8b1f0c27",
                "com.example.watched.WatchedLeak$ComposeActivity received Activity#onDestroy() callback", DUMP_UPTIME - 9_000);
        ref.setRetainedUptimeMillis(DUMP_UPTIME - 4_000);

        CartModel cart = new CartModel();
        held.add(cart);
        ref = watcher.watch(cart, "8e1d0b52-7c3f-4a91-b6e4-0f2a9c5d7e13",
                "com.example.watched.WatchedLeak$CartModel received ViewModel#onCleared() callback", DUMP_UPTIME - 12_000);
        ref.setRetainedUptimeMillis(DUMP_UPTIME - 7_000);

        Presenter presenter = new Presenter();
        held.add(presenter);
        watcher.watch(presenter, "c4a6e8f0-3b5d-4e7a-8c9b-1d2f3e4a5b6c",
                "com.example.watched.WatchedLeak$Presenter received ViewModel#onCleared() callback", DUMP_UPTIME - 1_000);

        ComposeActivity shown = new ComposeActivity();
        shown.performCreate("Inbox");
        current = new CompositionImpl(new Object());
        current.setContent(new Content(shown));
        KeyedWeakReference.setHeapDumpUptimeMillis(DUMP_UPTIME);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
