package dev.trainwatch.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which signals this test JVM ignores (and its children inherit: a JVM started with a signal ignored installs no
 * handler for it), e.g. SIGHUP under {@code nohup}, SIGINT in a background job of a non-interactive shell.
 */
public final class SignalMask {
    public static final int SIGHUP = 1;
    public static final int SIGINT = 2;

    private SignalMask() {
    }

    /** Whether this process ignores the signal (its bit in /proc/self/status's SigIgn); false where unreadable. */
    public static boolean ignored(int signal) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("SigIgn:")) {
                    return (Long.parseUnsignedLong(line.substring(7).strip(), 16) & (1L << (signal - 1))) != 0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
        return false;
    }
}
