package dev.trainwatch.cli.logging;

import java.io.PrintStream;
import java.time.Clock;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * Sets up the process's logging once, in {@code main}: trainwatch's code logs through {@link System.Logger}, which
 * the JDK routes to java.util.logging; this replaces its two-line default with one {@link LogOutput}. Call sites
 * stay as they are.
 */
public final class Logging {
    private Logging() {}

    /**
     * Replaces every handler of the root logger with one that writes {@code format} lines to {@code out} at
     * {@code level} and above.
     */
    public static LogOutput configure(LogFormat format, LogLevel level, PrintStream out) {
        return install(new LogOutput(out, format, Clock.systemUTC(), true), level);
    }

    static LogOutput install(LogOutput output, LogLevel level) {
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        root.setLevel(level.julLevel());
        output.setLevel(level.julLevel());
        root.addHandler(output);
        return output;
    }
}
