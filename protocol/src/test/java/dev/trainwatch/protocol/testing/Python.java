package dev.trainwatch.protocol.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** The machine's python3, for tests that start a process named like a trainer. */
public final class Python {

    private Python() {
    }

    /** The interpreter itself, not a wrapper script (pyenv's shims exec it later, changing the command line). */
    public static String executable() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("python3", "-c", "import sys; print(sys.executable)").start();
        String path = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor() != 0 || path.isEmpty()) {
            throw new IllegalStateException("python3 is needed to start a process named like a trainer");
        }
        return path;
    }
}
