package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@code trainwatch agent} in-process: NVML that cannot be used, and bad options. */
class AgentCommandTest {

    record Result(int status, String out, String err) {
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = TrainwatchCommand.newCommandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    static Path buildDeps() {
        String prop = System.getProperty("trainwatch.buildDeps.dir");
        return prop != null ? Path.of(prop) : Path.of("..", "build-deps");
    }

    @Test
    void nvidiasRealLibraryWithoutADriverIsOneLineAndExitThree() {
        Path real = buildDeps().resolve("libnvidia-ml.so.1.real");
        assertThat(real).as("run .ci/install-deps: it unpacks Debian's libnvidia-ml1").exists();
        Result once = run("agent", "--once", "--json", "--nvml-library", real.toString());
        assertThat(once.status()).isEqualTo(3);
        assertThat(once.out()).isEmpty();
        assertThat(once.err().lines()).singleElement().asString()
                .isEqualTo("trainwatch: NVIDIA driver not loaded (NVML: Driver Not Loaded)");

        Result loop = run("agent", "--collector", "http://127.0.0.1:9", "--nvml-library", real.toString(),
                "--spool-dir", Path.of("target", "unused-spool").toString());
        assertThat(loop.status()).isEqualTo(3);
        assertThat(loop.err().lines()).singleElement().asString().contains("NVIDIA driver not loaded");
    }

    @Test
    void aMissingLibraryIsOneLineAndExitThree() {
        Result result = run("agent", "--once", "--json", "--nvml-library", "/nonexistent/libnvidia-ml.so.1");
        assertThat(result.status()).isEqualTo(3);
        assertThat(result.err().lines()).singleElement().asString()
                .isEqualTo("trainwatch: NVML library not found: /nonexistent/libnvidia-ml.so.1");
    }

    @Test
    void aSpoolToReplayThatIsNotADirectoryIsOneLineAndExitTwo() {
        Result result = run("agent", "--replay-spool", "/nonexistent/spool", "--collector", "http://127.0.0.1:9");
        assertThat(result.status()).isEqualTo(2);
        assertThat(result.err().lines()).singleElement().asString()
                .isEqualTo("trainwatch: --replay-spool: /nonexistent/spool is not a directory");
        Result noCollector = run("agent", "--replay-spool", "target");
        assertThat(noCollector.status()).isEqualTo(2);
        assertThat(noCollector.err().strip()).startsWith("trainwatch: --collector URL is required");
    }

    @Test
    void badOptionsAreUsageErrors() {
        assertThat(run("agent", "--once", "--interval", "fast")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo(
                    "trainwatch: --interval: 'fast' is not a duration; use e.g. 500ms, 1s, 2.5s or 1m");
        });
        assertThat(run("agent", "--once", "--interval", "50ms")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo("trainwatch: --interval: 50ms is below the minimum of 100ms");
        });
        assertThat(run("agent", "--once", "--ship-every", "500ms")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo("trainwatch: --ship-every: 500ms is shorter than the polling "
                    + "interval (1s); readings cannot be sent more often than they are taken");
        });
        assertThat(run("agent", "--once", "--ship-every", "11s")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo("trainwatch: --ship-every: 11s is above the maximum of 10s (the "
                    + "collector calls an agent lost after 30s without a batch)");
        });
        assertThat(run("agent", "--once", "--ship-every", "often")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).startsWith("trainwatch: --ship-every: 'often' is not a duration");
        });
        assertThat(run("agent")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).contains("--collector URL is required");
        });
        assertThat(run("agent", "--collector", "ftp://x")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo(
                    "trainwatch: --collector wants an http(s) URL such as http://HOST:PORT, got 'ftp://x'");
        });
        assertThat(run("agent", "--collector", "http://127.0.0.1:9", "--attach", "999999999")).satisfies(r -> {
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo("trainwatch: --attach: no process with PID 999999999");
        });
        assertThat(run("agent", "--collector", "http://127.0.0.1:9", "--token-file", "/nonexistent/token"))
                .satisfies(r -> {
                    assertThat(r.status()).isEqualTo(2);
                    assertThat(r.err().strip()).isEqualTo("trainwatch: --token-file: cannot read /nonexistent/token");
                });
        assertThat(run("agent", "--attach", "notapid").status()).isEqualTo(2);
    }
}
