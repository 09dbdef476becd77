package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code trainwatch run} end to end, in a separate JVM, on a machine without NVML (as every CI machine is). */
class RunCommandIT {

    /** No NVML here: the command must still run and its log still be parsed. */
    private static final Map<String, String> NO_NVML = Map.of("TRAINWATCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");

    @TempDir
    Path dir;

    private static String pixartLine(int step, double timeAll, double timeData) {
        return String.format(java.util.Locale.ROOT, "Step/Epoch [%d/1][%d/5000]:total_eta: 1:02:03, epoch_eta:0:40:00, "
                + "time_all:%.3f, time_data:%.3f, lr:2.000e-05, s:(128, 128), loss:0.1234, grad_norm:0.5000", step, step,
                timeAll, timeData);
    }

    @Test
    void passesTheOutputThroughParsesItsStepsAndExitsWithTheCommandsStatus() throws Exception {
        String lines = pixartLine(10, 2.0, 1.5) + "\n" + pixartLine(20, 2.1, 1.4) + "\n" + pixartLine(30, 1.9, 1.5) + "\n";
        String script = "printf '%s' '" + lines + "'; printf 'progress 50%%\\r'; echo 'to stderr' >&2; exit 7";
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run", "--listen", "127.0.0.1:0",
                "--run-id", "pixart-test", "--model", "pixart-sigma-xl-2", "--gpu", "a800-80gb", "--batch", "4",
                "--resolution", "1024", "--features", "online", "--", "sh", "-c", script)) {
            assertThat(run.waitFor(Duration.ofSeconds(60))).isEqualTo(7);
            assertThat(run.stdout()).isEqualTo(lines + "progress 50%\r");
            String err = run.stderr();
            assertThat(err).contains("to stderr\n");
            assertThat(err).contains("trainwatch: watching sh (pid ");
            assertThat(err).containsOnlyOnce("no GPU readings");
            // The summary comes from the collector, which got the steps the output showed.
            assertThat(err).contains("trainwatch: pixart-test [ended]  step 30  2.00 s/step (predicted ");
            assertThat(err).doesNotContain("Exception");
        }
    }

    @Test
    void aCrashIsExplainedFromTheTailOfItsOutput() throws Exception {
        String oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                + "capacity of 79.15 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has "
                + "78.08 GiB memory in use. Of the allocated memory 74.90 GiB is allocated by PyTorch, and 1.70 GiB is "
                + "reserved by PyTorch but unallocated.";
        String lines = pixartLine(10, 2.0, 0.1) + "\n" + pixartLine(20, 2.0, 0.1) + "\n"
                + "Traceback (most recent call last):\n  File \"train_scripts/train.py\", line 412, in <module>\n"
                + oom + "\n";
        String script = "printf '%s' '" + lines + "' >&2; exit 1";
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run", "--listen", "127.0.0.1:0",
                "--run-id", "pixart-oom", "--model", "pixart-sigma-xl-2", "--gpu", "a100-80gb", "--batch", "16",
                "--resolution", "1024", "--", "sh", "-c", script)) {
            assertThat(run.waitFor(Duration.ofSeconds(60))).isEqualTo(1);
            String err = run.stderr();
            // PyTorch reserves the 74.90 GiB it allocated plus the 1.70 GiB "reserved but unallocated".
            assertThat(err).contains("trainwatch: the run failed (cuda_oom): CUDA out of memory: tried to allocate "
                    + "2.00 GiB on GPU 0 (79.15 GiB total, 1.06 GiB free, 76.60 GiB reserved by PyTorch)");
            assertThat(err).contains("run_failed");
            assertThat(err).doesNotContain("Exception in").doesNotContain("\tat ");
        }
    }

    @Test
    void anNcclTimeoutAHostOomKillAndASignalAreNamedWithTheirRankAndCause() throws Exception {
        String nccl = "[rank3]:[E1124 10:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
                + "operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
                + "ran for 600021 milliseconds before timing out.";
        String[][] cases = {
            {"printf '%s\\n' '" + nccl + "' >&2; exit 1", "1", "nccl_timeout, rank 3",
                "an NCCL collective timed out: ALLREDUCE #812 waited 600 s"},
            {"echo 'RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.' >&2; exit 1", "1",
                "host_oom", "a DataLoader worker was killed (the host's OOM killer)"},
            {"echo training; kill -9 $$", "137", "signal", "killed by SIGKILL"},
        };
        int i = 0;
        for (String[] c : cases) {
            try (TrainwatchProcess run = TrainwatchProcess.start(java.nio.file.Files.createDirectories(dir.resolve("case" + i++)), NO_NVML, "run", "--listen",
                    "127.0.0.1:0", "--", "sh", "-c", c[0])) {
                assertThat(run.waitFor(Duration.ofSeconds(60))).isEqualTo(Integer.parseInt(c[1]));
                assertThat(run.stderr()).contains("trainwatch: the run failed (" + c[2] + "): " + c[3]);
            }
        }
    }

    @Test
    void aRunThatEndsWellIsNotAFailureWhateverItPrinted() throws Exception {
        String script = "echo 'RuntimeError: this was caught and handled by the script'; exit 0";
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run", "--listen", "127.0.0.1:0", "--",
                "sh", "-c", script)) {
            assertThat(run.waitFor(Duration.ofSeconds(60))).isEqualTo(0);
            assertThat(run.stderr()).doesNotContain("failed");
        }
    }

    @Test
    void passesATerminationSignalOnAndExitsAsTheCommandDoes() throws Exception {
        String script = "trap 'echo got TERM; exit 5' TERM; echo ready; while :; do sleep 0.1; done";
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run", "--listen", "127.0.0.1:0", "--",
                "sh", "-c", script)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> run.stdout().contains("ready")
                    && run.stderr().contains("trainwatch: watching"));
            run.terminate();
            assertThat(run.waitFor(Duration.ofSeconds(60))).isEqualTo(5);
            assertThat(run.stdout()).isEqualTo("ready\ngot TERM\n");
            assertThat(run.stderr()).contains("SIGTERM received");
        }
    }

    @Test
    void aRunThatDivergedEndsWithItsAlertNeverResolved() throws Exception {
        String healthy = pixartLine(10, 2.0, 0.1) + "\n" + pixartLine(20, 2.0, 0.1) + "\n";
        String diverged = (pixartLine(30, 2.0, 0.1) + "\n" + pixartLine(40, 2.0, 0.1) + "\n")
                .replace("loss:0.1234", "loss:nan");
        // The command exits as soon as it printed its NaN: the last lines are judged before the run ends.
        String script = "printf '%s' '" + healthy + diverged + "'; exit 0";
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run", "--listen", "127.0.0.1:0",
                "--run-id", "nan-run", "--model", "pixart-sigma-xl-2", "--gpu", "a800-80gb", "--batch", "4",
                "--resolution", "1024", "--", "sh", "-c", script)) {
            assertThat(run.waitFor(Duration.ofSeconds(60))).isZero();
            String err = run.stderr();
            assertThat(err).contains("trainwatch alert FIRING critical loss_nonfinite run=nan-run")
                    .contains("trainwatch alert UNRESOLVED critical loss_nonfinite run=nan-run")
                    .doesNotContain("alert RESOLVED critical loss_nonfinite");
            assertThat(err).contains("loss_nonfinite (critical) (unresolved at the end)");
        }
    }

    @Test
    void aCtrlCFromItsOwnUserEndsTheRunStoppedNotFailed() throws Exception {
        // Python's own answer to SIGINT: a KeyboardInterrupt traceback and status 1 (130 from a shell).
        Assumptions.assumeFalse(SignalMask.ignored(SignalMask.SIGINT), "SIGINT is ignored here (a background job?)");
        String script = "import time\nprint('ready', flush=True)\nwhile True:\n    time.sleep(0.1)\n";
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run", "--listen", "127.0.0.1:0", "--",
                "python3", "-c", script)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> run.stdout().contains("ready")
                    && run.stderr().contains("trainwatch: watching"));
            new ProcessBuilder("kill", "-INT", Long.toString(run.pid())).start().waitFor();
            assertThat(run.waitFor(Duration.ofSeconds(60))).isNotZero();
            assertThat(run.stderr()).contains("SIGINT received")
                    .contains("trainwatch: the run was stopped by its user (SIGINT")
                    .doesNotContain("the run failed").doesNotContain("run_failed").doesNotContain("critical");
        }
    }

    @Test
    void aCommandThatCannotStartIsOneLineAndUsageStatus() throws Exception {
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run", "--listen", "127.0.0.1:0", "--",
                dir.resolve("no-such-program").toString())) {
            assertThat(run.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.USAGE);
            assertThat(run.stderr().strip()).startsWith("trainwatch: cannot start").doesNotContain("\n");
        }
    }

    @Test
    void withoutACommandItIsAUsageError() throws Exception {
        try (TrainwatchProcess run = TrainwatchProcess.start(dir, NO_NVML, "run")) {
            assertThat(run.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.USAGE);
            assertThat(run.stderr()).contains("CMD");
        }
    }
}
