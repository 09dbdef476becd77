package dev.trainwatch.cli;

/** Exit statuses of the {@code trainwatch} command. Only {@code main} exits. */
public final class ExitCodes {
    public static final int OK = 0;
    /** A runtime failure (I/O, a peer that is down) after the command started. */
    public static final int FAILURE = 1;
    /** Bad usage: unknown option, unknown model or GPU id, impossible value. */
    public static final int USAGE = 2;
    /** NVML cannot be used: no library, driver not loaded, no permission. */
    public static final int NVML_UNAVAILABLE = 3;

    private ExitCodes() {
    }
}
