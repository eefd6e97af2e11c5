package com.android.ddmlib;
/** Stand-in for ddmlib's Log (only Log.w is used, by ByteBufferUtil.cleanBuffer on failure). */
public final class Log {
    public static void w(String tag, String msg) { System.err.println("W/" + tag + ": " + msg); }
}
