package dev.trainwatch.cli.logging;

import java.io.PrintStream;
import java.time.Clock;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/** Sets up logging once, in {@code main}: one {@link LogOutput} instead of java.util.logging's two-line default. */
public final class Logging {
    private Logging() {}

    public static LogOutput configure(LogFormat format, LogLevel level, PrintStream out) {
        LogOutput output = new LogOutput(out, format, Clock.systemUTC(), true);
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        root.setLevel(level.julLevel());
        output.setLevel(level.julLevel());
        root.addHandler(output);
        return output;
    }
}
