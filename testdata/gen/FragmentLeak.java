package com.example.fragments;

import androidx.fragment.app.Fragment;
import java.util.ArrayList;
import java.util.List;

/**
 * An app that leaks an androidx Fragment: a destroyed fragment stays
 * reachable from a static field (the most common leak of Android apps),
 * beside a resumed one that is in use. Its heap runs on HotSpot with
 * stand-ins for the Android framework's android.os.Build (on the boot class
 * path) and androidx's Fragment and Lifecycle (testdata/gen/android/), so
 * that LeakCanary's Shark analyses its dump as an Android app's: it finds
 * the destroyed fragment by its lifecycle state's name, DESTROYED, the
 * text of an enum constant's name String.
 */
public class FragmentLeak {
    /** The leak: a destroyed fragment held by a static field. */
    static Fragment leakedFragment;

    /** Fragments in use. */
    static final List<Fragment> shown = new ArrayList<>();

    /** A fragment of the app. */
    public static class DetailFragment extends Fragment {
        final byte[] image = new byte[4096];
    }

    /** Another fragment of the app. */
    public static class ListFragment extends Fragment {
        final List<String> rows = new ArrayList<>();
    }

    public static void main(String[] args) throws Exception {
        Class.forName("android.os.Build", true, null);
        Class.forName("android.os.Build$VERSION", true, null);
        Object manager = new Object();
        ListFragment list = new ListFragment();
        list.resume(manager, "list");
        for (int i = 0; i < 20; i++) {
            list.rows.add("row " + i);
        }
        shown.add(list);
        DetailFragment detail = new DetailFragment();
        detail.resume(manager, "detail");
        detail.destroy();
        leakedFragment = detail;
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
