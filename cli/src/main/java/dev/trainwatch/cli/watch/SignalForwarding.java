package dev.trainwatch.cli.watch;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import sun.misc.Signal;

/**
 * Passes TERM, INT and HUP on to the training command, which decides how to stop (torchrun tears its workers down);
 * trainwatch exits with its status afterwards. A terminal's Ctrl-C already reaches the command, so INT is passed on
 * only without one. {@code sun.misc.Signal} is the JDK's only way to handle a signal.
 */
public final class SignalForwarding {

    private SignalForwarding() {
    }

    /** {@code interactive}: a terminal delivers Ctrl-C to the command itself. */
    public static void install(ChildProcess child, BooleanSupplier interactive, Consumer<String> onSignal) {
        for (String name : List.of("TERM", "INT", "HUP")) {
            try {
                Signal.handle(new Signal(name), signal -> {
                    onSignal.accept(name);
                    if (name.equals("INT") && interactive.getAsBoolean()) {
                        return;
                    }
                    send(child, name);
                });
            } catch (IllegalArgumentException e) {
                // The JVM reserves this signal here (e.g. run with -Xrs); it then keeps its default meaning.
            }
        }
    }

    static void send(ChildProcess child, String name) {
        if (!child.isAlive()) {
            return;
        }
        if (name.equals("TERM")) {
            child.terminate();
            return;
        }
        try {
            // The JDK can only send TERM and KILL; kill(1) sends the others.
            new ProcessBuilder("kill", "-s", name, Long.toString(child.pid()))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            child.terminate();
        }
    }
}
