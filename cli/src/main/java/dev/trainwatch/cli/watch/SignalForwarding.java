package dev.trainwatch.cli.watch;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import sun.misc.Signal;

/**
 * Passes TERM, INT and HUP on to the training command, which decides how to stop; trainwatch exits with its status
 * after. INT only when stdin is no terminal (a typed Ctrl-C reaches the command already). Uses sun.misc.Signal.
 */
public final class SignalForwarding {

    private SignalForwarding() {
    }

    /**
     * Installs the handlers for {@code child}.
     *
     * @param interactive true when a terminal delivers Ctrl-C to the command by itself
     * @param onSignal    told the signal's name, for a one-line note
     */
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
