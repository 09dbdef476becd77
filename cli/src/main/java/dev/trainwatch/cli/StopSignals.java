package dev.trainwatch.cli;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * SIGTERM and SIGINT as a request to stop in order, so {@code main} picks the exit status instead of the JVM's
 * 128 + signal. Uses sun.misc.Signal; where a signal cannot be taken (-Xrs) the JVM's default stays.
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
}
