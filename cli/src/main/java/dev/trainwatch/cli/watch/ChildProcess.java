package dev.trainwatch.cli.watch;

import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The training command of {@code trainwatch run}: its stdout and stderr copied byte for byte to ours, and each
 * complete line (or progress-bar frame) of either appended whole to a log copy the tailer parses. Thread-safe.
 */
public final class ChildProcess {

    /** A line longer than this is passed through but left out of the log copy (no step line is this long). */
    static final int MAX_COPIED_LINE_BYTES = 1 << 20;

    private final Process process;
    private final List<Thread> pumps = new ArrayList<>();
    private final OutputStream logCopy;

    private ChildProcess(Process process, OutputStream logCopy) {
        this.process = process;
        this.logCopy = logCopy;
    }

    public static ChildProcess start(List<String> command, OutputStream out, OutputStream err, Path logCopy)
            throws IOException {
        OutputStream copy = Files.newOutputStream(logCopy, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            copy.close();
            throw e;
        }
        ChildProcess child = new ChildProcess(process, copy);
        child.pump(process.getInputStream(), out, "stdout");
        child.pump(process.getErrorStream(), err, "stderr");
        return child;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits for the command and its output; its exit status as a shell reports it (128 + a signal). */
    public int waitFor() throws InterruptedException {
        int status = process.waitFor();
        for (Thread pump : pumps) {
            pump.join();
        }
        Errors.closeQuietly(logCopy); // the copy only feeds step parsing
        return status;
    }

    /** SIGTERM through the handle: {@link Process#destroy()} would close its pipes and lose what it prints. */
    public void terminate() {
        process.toHandle().destroy();
    }

    private void pump(InputStream from, OutputStream to, String name) {
        Thread t = new Thread(() -> copy(from, to), "trainwatch-run-" + name);
        t.setDaemon(true);
        pumps.add(t);
        t.start();
    }

    private void copy(InputStream from, OutputStream to) {
        LineAssembler lines = new LineAssembler(MAX_COPIED_LINE_BYTES, this::appendLine);
        byte[] buffer = new byte[8192];
        boolean passThrough = true;
        try (from) {
            int n;
            while ((n = from.read(buffer)) >= 0) {
                if (passThrough) {
                    try {
                        to.write(buffer, 0, n);
                        to.flush();
                    } catch (IOException closed) {
                        // Our stdout went away: keep draining so the command never blocks on a full pipe.
                        passThrough = false;
                    }
                }
                lines.feed(buffer, 0, n);
            }
            lines.finish();
        } catch (IOException e) {
            // the command closed its end
        }
    }

    private void appendLine(byte[] bytes, int offset, int length) {
        synchronized (logCopy) {
            try {
                logCopy.write(bytes, offset, length);
                logCopy.write('\n');
                logCopy.flush();
            } catch (IOException e) {
                // A full disk loses step parsing, not the run.
            }
        }
    }
}
