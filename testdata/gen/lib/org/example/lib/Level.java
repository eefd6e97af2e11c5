package org.example.lib;

/** An enum with fields and one constant-specific class body (Level$1). */
public enum Level {
    TRACE(0), DEBUG(10), INFO(20), WARN(30) {
        @Override public boolean loud() { return true; }
    }, ERROR(40);

    public final int severity;

    Level(int severity) { this.severity = severity; }

    public boolean loud() { return severity >= 40; }
}
