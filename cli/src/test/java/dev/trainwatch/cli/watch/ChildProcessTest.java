package dev.trainwatch.cli.watch;

import dev.trainwatch.cli.SignalMask;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChildProcessTest {

    @TempDir
    Path dir;

    @Test
    void passesBothStreamsThroughByteForByteAndReturnsTheExitCode() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Path copy = dir.resolve("copy.log");
        ChildProcess child = ChildProcess.start(List.of("sh", "-c",
                "printf 'first\\nbar 10%%\\rbar 20%%\\r'; printf 'é \\033[32mgreen\\033[0m\\n'; echo oops >&2; printf tail; exit 7"),
                out, err, copy);
        assertThat(exitOf(child)).isEqualTo(7);
        assertThat(out.toString(StandardCharsets.UTF_8))
                .isEqualTo("first\nbar 10%\rbar 20%\ré \033[32mgreen\033[0m\ntail");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("oops\n");
        assertThat(Files.readAllLines(copy)).contains("first", "bar 10%", "bar 20%", "é \033[32mgreen\033[0m", "oops", "tail");
    }

    @Test
    void aCommandKilledBySignalExitsAs128PlusTheSignal() throws Exception {
        ChildProcess child = ChildProcess.start(List.of("sh", "-c", "kill -TERM $$"), OutputStream.nullOutputStream(),
                OutputStream.nullOutputStream(), dir.resolve("copy.log"));
        assertThat(exitOf(child)).isEqualTo(128 + 15);
    }

    @Test
    void forwardedSignalsReachTheCommand() throws Exception {
        // Under nohup the command inherits SIGHUP ignored, and a shell cannot trap a signal ignored on entry (POSIX):
        // the forwarding would be tested against nothing.
        org.junit.jupiter.api.Assumptions.assumeFalse(SignalMask.ignored(SignalMask.SIGHUP),
                "SIGHUP is ignored here (run under nohup?)");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Path copy = dir.resolve("copy.log");
        ChildProcess child = ChildProcess.start(List.of("sh", "-c",
                "trap 'echo got HUP; exit 5' HUP; echo ready; while :; do sleep 0.05; done"), out,
                OutputStream.nullOutputStream(), copy);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> out.toString(StandardCharsets.UTF_8).contains("ready"));
        SignalForwarding.send(child, "HUP");
        assertThat(exitOf(child)).isEqualTo(5);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("got HUP");
    }

    @Test
    void whatTheCommandPrintsWhileStoppingStillComesThrough() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ChildProcess child = ChildProcess.start(List.of("sh", "-c",
                "trap 'echo saving checkpoint; exit 3' TERM; echo ready; while :; do sleep 0.05; done"), out,
                OutputStream.nullOutputStream(), dir.resolve("copy.log"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                .until(() -> out.toString(StandardCharsets.UTF_8).contains("ready"));
        SignalForwarding.send(child, "TERM");
        assertThat(exitOf(child)).isEqualTo(3);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("ready\nsaving checkpoint\n");
    }

    @Test
    void keepsDrainingWhenOurOwnOutputIsGone() throws Exception {
        OutputStream closed = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("Broken pipe");
            }
        };
        Path copy = dir.resolve("copy.log");
        ChildProcess child = ChildProcess.start(List.of("sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line $i; i=$((i+1)); done"),
                closed, closed, copy);
        assertThat(exitOf(child)).isZero();
        assertThat(Files.readAllLines(copy)).hasSize(20000).endsWith("line 19999");
    }

    @Test
    void aMissingCommandFailsToStartWithoutLeavingAnything() {
        assertThatThrownBy(() -> ChildProcess.start(List.of(dir.resolve("no-such-command").toString()),
                OutputStream.nullOutputStream(), OutputStream.nullOutputStream(), dir.resolve("copy.log")))
                .isInstanceOf(IOException.class);
    }

    /** The child's exit status, waited for at most 30 s (a child that ignores its signal fails the test). */
    private static int exitOf(ChildProcess child) throws Exception {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return child.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }).get(30, java.util.concurrent.TimeUnit.SECONDS);
    }
}
