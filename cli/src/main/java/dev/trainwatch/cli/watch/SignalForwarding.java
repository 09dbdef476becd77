package dev.trainwatch.cli.watch;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import sun.misc.Signal;

/**
 * Passes the signals that stop a job (TERM, INT, HUP) on to the training command instead of letting them end
 * trainwatch first: the command decides how to stop (PyTorch saves, torchrun tears its workers down), and
 * trainwatch exits with its status afterwards. A Ctrl-C typed at a terminal already reaches the command (the
 * terminal signals the whole foreground process group), so INT is passed on only when stdin is not a terminal,
 * never twice. Uses {@code sun.misc.Signal} (module jdk.unsupported), the JDK's only way to handle a signal.
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
