package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.agent.nvml.FakeNvml;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.state.view.AgentView;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real training job under trainwatch: Debian's python3-torch runs a DiT-shaped model with DDP (gloo, CPU) on 2
 * ranks under torchrun, each rank with a DataLoader worker, logging DiT's own lines; the fake NVML library reports
 * each rank's real PID on its GPU. Real processes, real tracebacks, real hangs: {@code trainwatch run} starts the
 * job, or the test starts it and {@code trainwatch agent --attach <torchrun pid>} watches it for an in-process
 * collector. Each scenario's window is short (tens of seconds) and every wait has a timeout. The two that wait out a
 * detector's own delay (a hang is named 45 s after the last step; data starvation holds for 60 s before it is raised)
 * run beside the others (their ranks mostly sleep).
 */
@Execution(ExecutionMode.CONCURRENT)
class RealTrainingIT {
    private static final Duration START = Duration.ofSeconds(60);
    private static final Pattern PAGE = Pattern.compile("page (http://\\S+)");

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<Process> processes = new ArrayList<>();
    private CollectorStack collector;
    private TorchJob job;

    @BeforeAll
    static void torchIsInstalled() {
        TorchJob.requireTorch();
    }

    @AfterEach
    void stopEverything() {
        for (Process p : processes) {
            TorchJob.killTree(p.toHandle());
        }
        if (collector != null) {
            collector.close();
        }
    }

    // ------------------------------------------------------------------------------------------- trainwatch run

    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void aHealthyJobUnderTrainwatchRunIsOneRunWithBothRanksAndTheirWorkersAndNoAnomaly() throws Exception {
        job = new TorchJob(dir);
        Path out = dir.resolve("trainwatch.out");
        Process trainwatch = trainwatchRun(out, job.torchrun("healthy", "--max-seconds", "20"));
        URI api = pageOf(out, trainwatch);

        JsonNode run = awaitRun(api, r -> ranksOnGpus(r).equals(Set.of(0, 1)) && workersOf(r) >= 2, out);
        // trainwatch run names the run before the command starts, from its own environment (torchrun gives its
        // TORCHELASTIC_RUN_ID to its ranks only); the attached agent's test below asserts the torchrun identity.
        assertThat(run.path("run_id").asText()).startsWith(dev.trainwatch.cli.watch.LocalStack.hostName() + "-run-");

        Seen seen = watchUntilExit(api, trainwatch);
        Set<String> runIds = seen.runIds();
        Set<String> anomalies = seen.activeAnomalies();
        assertThat(trainwatch.exitValue()).as(read(out)).isZero();
        assertThat(runIds).as("runs listed while the job ran").containsExactly(run.path("run_id").asText());
        assertThat(anomalies).as("anomalies of a healthy job").isEmpty();
        assertThat(read(out)).contains("(step=0000010) Train Loss:").doesNotContain("the run failed");
    }

    /**
     * A tiny Flux-shaped MMDiT (double-stream blocks with joint attention, then single-stream blocks, frozen base,
     * LoRA on the attention projections) "caches latents" under a bar, then trains with kohya's {@code steps:} bar.
     * The script waits for {@code go} after caching and for {@code finish} after its last step, so the phase and the
     * steps are read from the API while the run is listed.
     */
    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void aFluxShapedLoraWithAFrozenBaseIsReadStepByStepAndItsCachingIsAPhase() throws Exception {
        Path out = dir.resolve("trainwatch.out");
        Process trainwatch = runMmditLora(out, "--steps", "10", "--cache-items", "6");
        URI api = pageOf(out, trainwatch);

        JsonNode caching = awaitRun(api, r -> r.path("phase").path("kind").asText().equals("caching")
                && r.path("phase").path("progress").path("done").asLong() == 6, out);
        assertThat(caching.path("phase").path("progress").path("total").asLong()).isEqualTo(6);
        assertThat(caching.path("phase").path("progress").path("per_second").asDouble()).isPositive();
        assertThat(caching.path("observed").path("last_step").isMissingNode()
                || caching.path("observed").path("last_step").isNull()).as("no step from the caching bar").isTrue();
        String runId = caching.path("run_id").asText();
        Files.createFile(job.results.resolve("go"));

        await().atMost(START).until(() -> Files.exists(job.results.resolve("steps.json")));
        JsonNode printed = Json.MAPPER.readTree(job.results.resolve("steps.json").toFile());
        List<String> expected = new ArrayList<>();
        printed.forEach(p -> expected.add(p.path("step").asLong() + " " + Double.parseDouble(p.path("avr_loss").asText())));
        List<String> read = new ArrayList<>();
        JsonNode[] series = new JsonNode[1];
        try {
            await().atMost(START).pollInterval(Duration.ofMillis(500)).ignoreExceptions().until(() -> {
                series[0] = get(api.resolve("/v1/runs/" + runId + "/series?gpus=false"));
                read.clear();
                series[0].path("steps").forEach(st -> read.add(st.path("step").asLong() + " " + st.path("loss")
                        .asDouble()));
                return read.size() >= expected.size();
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("steps read " + read + ", printed " + expected + "; series " + series[0]
                    + "\noutput:\n" + tail(read(out)), e);
        }
        assertThat(read).as("every step and avr_loss as printed").isEqualTo(expected);
        JsonNode run = get(api.resolve("/v1/runs/" + runId));
        assertThat(run.path("phase").isMissingNode()).as("no phase once it trains").isTrue();
        assertThat(run.path("anomalies")).noneMatch(a -> a.path("active").asBoolean());
        Files.createFile(job.results.resolve("finish"));

        Seen seen = watchUntilExit(api, trainwatch);
        assertThat(trainwatch.exitValue()).as(read(out)).isZero();
        assertThat(seen.runIds()).containsExactly(runId);
        assertThat(seen.activeAnomalies()).as("anomalies of a healthy LoRA run").isEmpty();
        assertThat(read(out)).contains("trainable params: 6144", "model saved.").doesNotContain("the run failed");
    }

    /** Starts {@code resources/torch/mmdit_lora.py} under {@code trainwatch run}, as rank 0, with {@code options}. */
    private Process runMmditLora(Path out, String... options) throws Exception {
        job = new TorchJob(dir);
        Path script = dir.resolve("mmdit_lora.py");
        try (InputStream in = RealTrainingIT.class.getResourceAsStream("/torch/mmdit_lora.py")) {
            Files.copy(in, script);
        }
        List<String> command = new ArrayList<>(List.of("env", "RANK=0", TorchJob.PYTHON.toString(), script.toString(),
                "--results-dir", job.results.toString()));
        command.addAll(List.of(options));
        return trainwatchRun(out, command);
    }

    /** The same LoRA whose trainer catches a CUDA OOM and skips the batch, as ai-toolkit does: a critical oom_risk. */
    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void aCaughtAndSkippedOomIsACriticalOomRiskWhileTheLoraTrainsOn() throws Exception {
        Path out = dir.resolve("trainwatch.out");
        Process trainwatch = runMmditLora(out, "--oom-skip-step", "4");
        URI api = pageOf(out, trainwatch);
        await().atMost(START).until(() -> Files.isDirectory(job.results));
        Files.createFile(job.results.resolve("go"));

        JsonNode run = awaitRun(api, r -> activeAnomaly(r, "oom_risk") != null, out);
        JsonNode oom = activeAnomaly(run, "oom_risk");
        assertThat(oom.path("severity").asText()).isEqualTo("critical");
        assertThat(oom.path("message").asText()).startsWith("the trainer caught 1 CUDA OOM and skipped that batch");
        assertThat(oom.path("evidence").path("oom_skipped_batches").asLong()).isEqualTo(1);
        Files.createFile(job.results.resolve("finish"));
        assertThat(trainwatch.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(trainwatch.exitValue()).as(read(out)).isZero();
    }

    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void aNanLossIsRaisedWhileTheJobTrainsOnAndItsExitStatusIsPassedThrough() throws Exception {
        job = new TorchJob(dir);
        Path out = dir.resolve("trainwatch.out");
        Process trainwatch = trainwatchRun(out, job.torchrun("nan", "--fault-step", "30", "--max-seconds", "12"));
        URI api = pageOf(out, trainwatch);
        JsonNode run = awaitRun(api, r -> activeAnomaly(r, "loss_nonfinite") != null, out);
        assertThat(activeAnomaly(run, "loss_nonfinite").path("message").asText()).containsIgnoringCase("nan");
        assertThat(run.at("/observed/loss_nonfinite").asBoolean()).isTrue();
        assertThat(trainwatch.waitFor(90, TimeUnit.SECONDS)).as("trainwatch run exits with its command").isTrue();
        assertThat(trainwatch.exitValue()).as(read(out)).isZero();
    }

    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void anExceptionInRankOneIsTheCauseAndRankOneIsNamed() throws Exception {
        job = new TorchJob(dir);
        Path out = dir.resolve("trainwatch.out");
        // The ranks' stderr teed with torchrun's [defaultN]: prefixes: each traceback says whose it is.
        Process trainwatch = trainwatchRun(out, job.torchrun(true, "exception", "--fault-step", "30"));
        assertThat(trainwatch.waitFor(120, TimeUnit.SECONDS)).as("trainwatch run exits with its command").isTrue();
        String output = read(out);
        // torchrun exits 1 when a worker failed; trainwatch passes that on.
        assertThat(trainwatch.exitValue()).as(output).isEqualTo(1);
        assertThat(output).contains("ValueError: bad sample in batch 30")
                .contains("Connection closed by peer")
                .contains("trainwatch: the run failed (exception, rank 1): a Python exception: ValueError: bad sample");
    }

    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void aSigkilledRankIsASignalOfThatRankNotHostMemory() throws Exception {
        job = new TorchJob(dir);
        Path out = dir.resolve("trainwatch.out");
        Process trainwatch = trainwatchRun(out, job.torchrun("sigkill", "--fault-step", "30"));
        assertThat(trainwatch.waitFor(120, TimeUnit.SECONDS)).as("trainwatch run exits with its command").isTrue();
        String output = read(out);
        assertThat(trainwatch.exitValue()).as(output).isEqualTo(1);
        assertThat(output).contains("exitcode  : -9")
                .contains("trainwatch: the run failed (signal, rank 1): killed by SIGKILL")
                .doesNotContain("(host_oom");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aHungRankIsNamedByStalled() throws Exception {
        job = new TorchJob(dir);
        Path out = dir.resolve("trainwatch.out");
        Process trainwatch = trainwatchRun(out, job.torchrun("hang", "--fault-step", "30"));
        URI api = pageOf(out, trainwatch);
        await().atMost(START).pollInterval(Duration.ofMillis(200)).until(() -> job.fault(1).isPresent());
        // Rank 0 now waits in the all-reduce: on a GPU, NCCL spins at 100% and a third of the training power while
        // the sleeping rank's GPU idles. The fake plays that from now on.
        job.writeScenario(100, 110_000, 0, 60_000);
        JsonNode run = awaitRun(api, r -> activeAnomaly(r, "stalled") != null, Duration.ofSeconds(100), out);
        JsonNode stalled = activeAnomaly(run, "stalled");
        assertThat(stalled.at("/evidence/ranks")).as(stalled.toString()).hasSize(1);
        assertThat(stalled.at("/evidence/ranks/0").asInt()).isEqualTo(1);
    }

    // -------------------------------------------------------------------------------- trainwatch agent --attach

    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void anAttachedAgentSeesOneRunNamedByTorchElasticWithoutAGhostLauncherRun() throws Exception {
        job = new TorchJob(dir);
        URI api = startCollector();
        Process torchrun = startJob(job.torchrun("healthy", "--max-seconds", "20"), dir.resolve("job.out"));
        Path agentOut = dir.resolve("agent.out");
        Process agent = attachAgent(torchrun.pid(), job.results.resolve("log.txt"), api, agentOut);

        JsonNode run = awaitRun(api, r -> ranksOnGpus(r).equals(Set.of(0, 1)) && workersOf(r) >= 2, agentOut);
        assertThat(run.path("run_id").asText()).isEqualTo(torchElasticRunId(torchrun.pid()));
        Seen seen = watchUntilExit(api, agent);
        Set<String> runIds = seen.runIds();
        Set<String> anomalies = seen.activeAnomalies();
        assertThat(agent.exitValue()).as("the agent exits when the attached run ended: " + read(agentOut)).isZero();
        assertThat(torchrun.waitFor(10, TimeUnit.SECONDS) && torchrun.exitValue() == 0).isTrue();
        assertThat(runIds).as("runs listed while the job ran (no run for the launcher alone)")
                .containsExactly(run.path("run_id").asText());
        assertThat(anomalies).as("anomalies of a healthy job").isEmpty();
    }

    /**
     * {@code --ship-every}: the agent polls every 500 ms and sends five polls' readings at a time; the same healthy
     * job is one run with both ranks, quiet, every logged step counted, in a fifth of the batches.
     */
    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void anAgentSendingFivePollsPerBatchSeesTheSameQuietRunInAFifthOfTheBatches() throws Exception {
        job = new TorchJob(dir);
        URI api = startCollector();
        Process torchrun = startJob(job.torchrun("healthy", "--max-seconds", "20"), dir.resolve("job.out"));
        Path agentOut = dir.resolve("agent.out");
        Process agent = attachAgent(torchrun.pid(), job.results.resolve("log.txt"), api, agentOut, "--ship-every",
                "2.5s");
        long started = System.nanoTime();

        JsonNode run = awaitRun(api, r -> ranksOnGpus(r).equals(Set.of(0, 1)) && workersOf(r) >= 2, agentOut);
        String runId = run.path("run_id").asText();
        Seen seen = watchUntilExit(api, agent);
        Set<String> runIds = seen.runIds();
        Set<String> anomalies = seen.activeAnomalies();
        double seconds = (System.nanoTime() - started) / 1e9;
        assertThat(agent.exitValue()).as("the agent exits when the attached run ended: " + read(agentOut)).isZero();
        assertThat(read(agentOut)).contains("polling every 500ms").contains("every 2.5s");
        assertThat(runIds).containsExactly(runId);
        assertThat(anomalies).as("anomalies of a healthy job").isEmpty();
        // Every step the log printed reached the run, once (the last logged step is the run's last step).
        JsonNode ended = get(api.resolve("/v1/runs/" + runId));
        assertThat(ended.at("/observed/last_step").asLong()).as(ended.toString())
                .isEqualTo(lastLoggedStep(job.results.resolve("log.txt")));
        // Polls every 0.5 s, a batch every 2.5 s (plus the first poll and the run's start and end, sent at once).
        dev.trainwatch.collector.state.view.AgentView view = collector.fleet().agents().get(0);
        assertThat(view.health().intervalSeconds()).isEqualTo(0.5);
        assertThat(view.batches()).as("batches in %.0f s", seconds).isGreaterThan(3)
                .isLessThanOrEqualTo((long) (seconds / 2.5) + 6);
    }

    /**
     * {@code --ship-every 5s} with a real job that turns NaN and trains on: the NaN loss is named (a non-finite loss
     * is never held back), and every step the log printed reaches the run once.
     */
    @Test
    @Execution(ExecutionMode.SAME_THREAD)
    void anAgentHoldingFiveSecondsOfReadingsStillNamesARealNanLoss() throws Exception {
        job = new TorchJob(dir);
        URI api = startCollector();
        Process torchrun = startJob(job.torchrun("nan", "--fault-step", "30", "--max-seconds", "12"),
                dir.resolve("job.out"));
        Path agentOut = dir.resolve("agent.out");
        Process agent = attachAgent(torchrun.pid(), job.results.resolve("log.txt"), api, agentOut, "--ship-every",
                "5s");
        JsonNode run = awaitRun(api, r -> activeAnomaly(r, "loss_nonfinite") != null, agentOut);
        assertThat(activeAnomaly(run, "loss_nonfinite").path("message").asText()).containsIgnoringCase("nan");
        String runId = run.path("run_id").asText();
        assertThat(agent.waitFor(90, TimeUnit.SECONDS)).as("the agent exits when the run ended").isTrue();
        assertThat(agent.exitValue()).as(read(agentOut)).isZero();
        assertThat(read(agentOut)).contains("every 5s");
        JsonNode ended = get(api.resolve("/v1/runs/" + runId));
        assertThat(ended.at("/observed/last_step").asLong()).as(ended.toString())
                .isEqualTo(lastLoggedStep(job.results.resolve("log.txt")));
    }

    /**
     * An attached agent reading the job's output (torchrun's prefixed tracebacks) names rank 1's exception as the
     * cause, also when it holds five seconds of readings ({@code --ship-every 5s}: the run's end goes at once).
     */
    @ParameterizedTest
    @ValueSource(strings = {"", "5s"})
    @Execution(ExecutionMode.SAME_THREAD)
    void anAttachedAgentReadingTheJobsOutputNamesRankOnesException(String shipEvery) throws Exception {
        job = new TorchJob(dir);
        URI api = startCollector();
        Path jobOut = dir.resolve("job.out");
        Process torchrun = startJob(job.torchrun(true, "exception", "--fault-step", "30"), jobOut);
        Path agentOut = dir.resolve("agent.out");
        Process agent = shipEvery.isEmpty() ? attachAgent(torchrun.pid(), jobOut, api, agentOut)
                : attachAgent(torchrun.pid(), jobOut, api, agentOut, "--ship-every", shipEvery);
        String runId = awaitRun(api, r -> ranksOnGpus(r).equals(Set.of(0, 1)), agentOut).path("run_id").asText();
        assertThat(agent.waitFor(120, TimeUnit.SECONDS)).as("the agent exits when the run ended").isTrue();
        JsonNode ended = get(api.resolve("/v1/runs/" + runId));
        assertThat(ended.path("ended").asBoolean()).as(ended.toString()).isTrue();
        JsonNode failed = anomaly(ended, "run_failed");
        assertThat(failed).as(ended.toString()).isNotNull();
        assertThat(failed.at("/evidence/cause").asText()).as(failed.toString()).isEqualTo("exception");
        assertThat(failed.at("/evidence/rank").asInt(-1)).as(failed.toString()).isEqualTo(1);
        assertThat(failed.at("/evidence/summary").asText()).contains("ValueError");
    }

    private static long lastLoggedStep(Path log) {
        java.util.regex.Matcher logged = java.util.regex.Pattern.compile("\\(step=(\\d+)\\)").matcher(read(log));
        long last = -1;
        while (logged.find()) {
            last = Long.parseLong(logged.group(1));
        }
        return last;
    }

    /** DiT's log.txt has no traceback (they go to stderr): the end says so, and which output holds it. */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void anAttachedRunWhoseLogHasNoTracebackEndsWithoutACauseInTheLog() throws Exception {
        job = new TorchJob(dir);
        URI api = startCollector();
        Path jobOut = dir.resolve("job.out");
        Process torchrun = startJob(job.torchrun("exception", "--fault-step", "30"), jobOut);
        Path agentOut = dir.resolve("agent.out");
        Process agent = attachAgent(torchrun.pid(), job.results.resolve("log.txt"), api, agentOut);
        String runId = awaitRun(api, r -> ranksOnGpus(r).equals(Set.of(0, 1)), agentOut).path("run_id").asText();
        assertThat(agent.waitFor(120, TimeUnit.SECONDS)).as("the agent exits when the run ended").isTrue();
        JsonNode ended = get(api.resolve("/v1/runs/" + runId));
        assertThat(anomaly(ended, "run_failed")).as(ended.toString()).isNull();
        assertThat(ended.at("/ending/message").asText()).as(ended.toString())
                .startsWith("ended without a cause in the log").contains(jobOut.toString());
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void slowDataWithoutASpecIsComparedWithTheRunsOwnEarlierSteps() throws Exception {
        job = new TorchJob(dir);
        URI api = startCollector();
        Path agentOut = startSlowLoader(api, List.of());
        JsonNode run = awaitRun(api, r -> activeAnomaly(r, "data_starvation") != null, Duration.ofSeconds(120),
                agentOut);
        JsonNode starved = activeAnomaly(run, "data_starvation");
        assertThat(starved.path("message").asText()).as(starved.toString())
                .contains("slower than this run's own earlier");
        assertThat(starved.at("/evidence/slowdown_ratio").asDouble()).isGreaterThan(3);
    }

    /**
     * The same slow loader with the job logging PixArt-Sigma's step line (its real wait for the DataLoader as
     * {@code time_data}) and the agent sending ten seconds of 500-ms polls per batch: the collector names the wait
     * from the step reports — the share the log measured, not a guess from the GPUs. (That the agent sends the report
     * that turned starved at once, and the polls after it one by one, is pinned by the agent's ShipEveryTest.)
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aPixArtLogTurningToWaitForDataIsNamedFromItsReportsWithTenSecondBatches() throws Exception {
        job = new TorchJob(dir);
        URI api = startCollector();
        Path agentOut = startSlowLoader(api, List.of("--log-format", "pixart"), "--ship-every", "10s");
        JsonNode run = awaitRun(api, r -> activeAnomaly(r, "data_starvation") != null, Duration.ofSeconds(120),
                agentOut);
        JsonNode starved = activeAnomaly(run, "data_starvation");
        assertThat(starved.path("message").asText()).as(starved.toString()).contains("of each")
                .contains("step is data time");
        // 8 samples of 0.25 s each per batch in one worker: most of each step waits for it.
        assertThat(starved.at("/evidence/data_wait_ratio").asDouble()).as(starved.toString()).isGreaterThan(0.5);
        List<String> log = Files.readAllLines(job.results.resolve("log.txt"));
        assertThat(log).anySatisfy(l -> assertThat(l).contains("Step/Epoch [").contains("time_data:"));
    }

    // ------------------------------------------------------------------------------------------------ plumbing

    /**
     * Starts the job whose loader slows down at step 60 and an agent attached to it, waits for the fault and makes the
     * fake's GPUs idle between kernels from then on; returns the agent's output file. From step 60 on each sample
     * takes 0.25 s to load in the single DataLoader worker of each rank: a step of 8 samples waits 2 s for its batch,
     * many times its earlier time however busy the machine is (with 0.1 s a sample, steps already slowed by the
     * other suites beside this one gave a ratio of 2.8).
     */
    private Path startSlowLoader(URI api, List<String> jobArgs, String... agentArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of("--fault-step", "60", "--slow-sample-seconds", "0.25",
                "--max-seconds", "150"));
        args.addAll(jobArgs);
        Process torchrun = startJob(job.torchrun("slowdata", args.toArray(String[]::new)), dir.resolve("job.out"));
        Path agentOut = dir.resolve("agent.out");
        attachAgent(torchrun.pid(), job.results.resolve("log.txt"), api, agentOut, agentArgs);
        // 60 steps of two ranks on the CPU: about 30 s on a quiet machine, longer beside the other tests.
        await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(200)).until(() -> job.fault(0).isPresent());
        // A GPU waiting for its input idles between kernels: the fake shows that from now on.
        job.writeScenario(40, 150_000, 40, 150_000, 75);
        return agentOut;
    }

    private Process trainwatchRun(Path out, List<String> command) throws IOException {
        List<String> args = new ArrayList<>(List.of("run", "--listen", "127.0.0.1:0", "--interval", "500ms",
                "--nvml-library", FakeNvml.library().toString(), "--"));
        args.addAll(command);
        return start(trainwatch(args), out);
    }

    private Process attachAgent(long pid, Path log, URI api, Path out, String... more) throws IOException {
        List<String> args = new ArrayList<>(List.of("agent", "--attach", Long.toString(pid), "--collector",
                api.toString(), "--log", log.toString(), "--interval", "500ms", "--nvml-library",
                FakeNvml.library().toString(), "--spool-dir", dir.resolve("spool").toString()));
        args.addAll(List.of(more));
        return start(trainwatch(args), out);
    }

    private Process startJob(List<String> command, Path out) throws IOException {
        return start(command, out);
    }

    private static List<String> trainwatch(List<String> args) {
        // The C1 compiler alone and the serial collector, as the launcher starts an agent (and its collector with
        // the serial collector too): with the JVM's defaults (C2 and G1) a 12 s `trainwatch run` took 4.6 s of CPU,
        // with these 2.8 s, CPU the torch jobs beside it need.
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-cp",
                System.getProperty("java.class.path"), "dev.trainwatch.cli.TrainwatchCommand"));
        cmd.addAll(args);
        return cmd;
    }

    private Process start(List<String> command, Path out) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile());
        builder.environment().putAll(job.environment());
        Process p = builder.start();
        processes.add(p);
        return p;
    }

    private URI startCollector() {
        collector = CollectorStack.start(CollectorConfig.defaults().withListen("127.0.0.1", 0), line -> { });
        return collector.server().uri();
    }

    private static URI pageOf(Path out, Process process) {
        String[] uri = new String[1];
        await().atMost(START).pollInterval(Duration.ofMillis(100)).failFast(() -> !process.isAlive())
                .until(() -> {
                    Matcher m = PAGE.matcher(read(out));
                    if (m.find()) {
                        uri[0] = m.group(1);
                        return true;
                    }
                    return false;
                });
        return URI.create(uri[0]);
    }

    private JsonNode awaitRun(URI api, java.util.function.Predicate<JsonNode> condition, Path out) {
        return awaitRun(api, condition, START, out);
    }

    /** The first listed run that meets the condition, within the timeout (the output is in the failure message). */
    private JsonNode awaitRun(URI api, java.util.function.Predicate<JsonNode> condition, Duration timeout, Path out) {
        JsonNode[] found = new JsonNode[1];
        JsonNode[] last = new JsonNode[1];
        try {
            await().atMost(timeout).pollInterval(Duration.ofMillis(500)).ignoreExceptions().until(() -> {
                last[0] = get(api.resolve("/v1/runs"));
                for (JsonNode r : runsOf(last[0])) {
                    JsonNode full = get(api.resolve("/v1/runs/" + r.path("run_id").asText()));
                    if (condition.test(full)) {
                        found[0] = full;
                        return true;
                    }
                }
                return false;
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("no run met the condition within " + timeout + "; runs: " + last[0]
                    + "\noutput:\n" + tail(read(out)), e);
        }
        return found[0];
    }

    /** The run ids listed and the active anomalies (kind: message) seen while a process ran. */
    private record Seen(Set<String> runIds, Set<String> activeAnomalies) {
    }

    /** Lists the runs every second until the process exits (at most 90 s): what was seen. */
    private Seen watchUntilExit(URI api, Process process) throws InterruptedException {
        Seen seen = new Seen(new LinkedHashSet<>(), new TreeSet<>());
        watchUntilExit(api, process, Duration.ofSeconds(90), runs -> {
            for (JsonNode r : runs) {
                seen.runIds().add(r.path("run_id").asText());
                for (JsonNode a : r.path("anomalies")) {
                    if (a.path("active").asBoolean()) {
                        seen.activeAnomalies().add(a.path("kind").asText() + ": " + a.path("message").asText());
                    }
                }
            }
        });
        return seen;
    }

    /** Polls the runs every second until the process exits (or the timeout), handing each listing to the check. */
    private void watchUntilExit(URI api, Process process, Duration timeout,
                                java.util.function.Consumer<List<JsonNode>> each) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (process.isAlive()) {
            assertThat(System.nanoTime()).as("%s still running after %s", process.info().command(), timeout)
                    .isLessThan(deadline);
            try {
                List<JsonNode> runs = new ArrayList<>();
                for (JsonNode r : runsOf(get(api.resolve("/v1/runs")))) {
                    runs.add(get(api.resolve("/v1/runs/" + r.path("run_id").asText())));
                }
                each.accept(runs);
            } catch (IOException e) {
                // trainwatch run's collector stops with the command: the last listing was before that.
            }
            process.waitFor(1, TimeUnit.SECONDS);
        }
    }

    private JsonNode get(URI uri) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException(uri + ": " + response.statusCode() + " " + response.body());
        }
        return Json.MAPPER.readTree(response.body());
    }

    private static List<JsonNode> runsOf(JsonNode listing) {
        List<JsonNode> runs = new ArrayList<>();
        JsonNode array = listing.isArray() ? listing : listing.path("runs");
        array.forEach(runs::add);
        return runs;
    }

    /** The ranks whose processes the run's GPUs show. */
    private static Set<Integer> ranksOnGpus(JsonNode run) {
        Set<Integer> ranks = new TreeSet<>();
        for (JsonNode gpu : run.path("gpus")) {
            JsonNode rank = gpu.at("/process/rank");
            if (rank.isInt()) {
                ranks.add(rank.asInt());
            }
        }
        return ranks;
    }

    private static int workersOf(JsonNode run) {
        int workers = 0;
        for (JsonNode gpu : run.path("gpus")) {
            workers += gpu.at("/process/workers").asInt(0);
        }
        return workers;
    }

    /** TORCHELASTIC_RUN_ID from the environment of a rank below the given process. */
    private static String torchElasticRunId(long ancestor) {
        String[] id = new String[1];
        await().atMost(START).pollInterval(Duration.ofMillis(200)).until(() -> {
            for (Map.Entry<Integer, Long> rank : TorchJob.rankPids(ancestor).entrySet()) {
                id[0] = TorchJob.environ(rank.getValue()).get("TORCHELASTIC_RUN_ID");
                if (id[0] != null) {
                    return true;
                }
            }
            return false;
        });
        return id[0];
    }

    private static JsonNode activeAnomaly(JsonNode run, String kind) {
        for (JsonNode a : run.path("anomalies")) {
            if (kind.equals(a.path("kind").asText()) && a.path("active").asBoolean()) {
                return a;
            }
        }
        return null;
    }

    private static JsonNode anomaly(JsonNode run, String kind) {
        for (JsonNode a : run.path("anomalies")) {
            if (kind.equals(a.path("kind").asText())) {
                return a;
            }
        }
        return null;
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private static String tail(String text) {
        return text.length() <= 6000 ? text : text.substring(text.length() - 6000);
    }
}
