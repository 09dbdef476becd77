package dev.trainwatch.cli;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * SIGTERM and SIGINT as a request to stop in order, for long-running commands that document exit status 0 when
 * stopped that way. By default the JVM answers them by running shutdown hooks and exiting with 128 + the signal
 * number, whatever the hooks did; taking the signals lets {@code main} finish and pick the status itself.
 *
 * <p>Uses {@code sun.misc.Signal} (module {@code jdk.unsupported}, present in every JDK and meant for this). Where
 * a signal cannot be taken (the JVM runs with {@code -Xrs}, or another handler owns it) the JVM's default stays.
 */
final class StopSignals {

    private static final AtomicBoolean RECEIVED = new AtomicBoolean();

    private StopSignals() {
    }

    /** Runs {@code onStop} (on the JVM's signal thread; it must be quick) at the first SIGTERM or SIGINT. */
    static void install(Runnable onStop) {
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
                    if (RECEIVED.compareAndSet(false, true)) {
                        onStop.run();
                    }
                });
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                // The JVM's own handling stays: shutdown hooks, then exit 128 + n.
            }
        }
    }

    /** True once a stop signal arrived. */
    static boolean received() {
        return RECEIVED.get();
    }
}
