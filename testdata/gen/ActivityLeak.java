package com.example.activities;

import android.app.Activity;
import android.os.Looper;
import android.view.inputmethod.InputMethodManager;

/**
 * An app that leaks an Activity, the leak LeakCanary reports most: a
 * callback an activity registered and did not unregister holds the
 * activity after the framework destroyed it. Beside it, a live activity
 * in use. Its heap runs on HotSpot with stand-ins for the Android
 * framework's android.app.Activity, android.os.Build and android.os.Looper
 * on the boot class path (testdata/gen/android/boot/), so that LeakCanary's
 * Shark analyses its dump as an Android app's: it finds the destroyed
 * activity by its mDestroyed field, a primitive value of a framework class.
 *
 * A second destroyed activity is held by the framework alone: the input
 * method manager keeps the connection of its editor, as Samsung's Android
 * 9 to 11 do. The stand-ins say Build.MANUFACTURER "samsung" and, for this
 * program, SDK_INT 30, where Shark knows that leak as a library leak
 * (AndroidReferenceMatchers.IMM_CURRENT_INPUT_CONNECTION), not the app's:
 * the manufacturer is a String's text, which a BMD file does not hold, and
 * decrunch writes it back from the file's label Build.MANUFACTURER.
 */
public class ActivityLeak {
    /** The registered callbacks: one of a destroyed activity, the leak. */
    static Runnable onNetworkChange;

    /** The activity in use. */
    static Activity current;

    /** The app's main activity, whose callback outlives it. */
    public static class MainActivity extends Activity {
        final byte[] header = new byte[2048];
        int refreshes;

        /** Refreshes the activity's content (an inner class: it holds the activity). */
        class Refresh implements Runnable {
            public void run() {
                refreshes++;
            }
        }
    }

    /** An activity with a text editor, whose input connection the framework keeps. */
    public static class EditorActivity extends Activity {
        final char[] draft = new char[512];

        /** The editor's input connection (an inner class: it holds the activity). */
        class Connection {
            int batchEdits;
        }
    }

    /** Another activity of the app, in use. */
    public static class SettingsActivity extends Activity {
        final StringBuilder summary = new StringBuilder("settings");
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("standin.sdk", "30");
        Class.forName("android.os.Build", true, null);
        Class.forName("android.os.Build$VERSION", true, null);
        Looper.prepareMainLooper();
        // The main thread's frame holds the destroyed activity in a local
        // as the heap is dumped. Shark ignores the locals of the thread
        // named "main" (a String's text, which a BMD file does not hold:
        // decrunch writes it back for the thread of Looper.sMainLooper);
        // were they followed, the callback would not retain the activity.
        Activity last = launch();
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
        System.out.println(last);
    }

    /** Runs the activities: the main one and the editor, destroyed, and the settings. */
    static Activity launch() {
        MainActivity main = new MainActivity();
        main.performCreate("Main");
        onNetworkChange = main.new Refresh();
        onNetworkChange.run();
        main.finish(-1);
        main.performDestroy();
        EditorActivity editor = new EditorActivity();
        editor.performCreate("Editor");
        InputMethodManager.getInstance().startInput(editor.new Connection());
        editor.finish(0);
        editor.performDestroy();
        SettingsActivity settings = new SettingsActivity();
        settings.performCreate("Settings");
        current = settings;
        return main;
    }
}
