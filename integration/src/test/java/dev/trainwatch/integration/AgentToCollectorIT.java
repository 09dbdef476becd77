package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.agent.Agent;
import dev.trainwatch.agent.AgentConfig;
import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.log.LogTailer;
import dev.trainwatch.agent.nvml.FakeNvml;
import dev.trainwatch.agent.nvml.NvmlGpuReader;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real agent — NVML read through JNA from the fake {@code libnvidia-ml.so.1}, the run's PixArt log tailed,
 * processes attributed from {@code /proc}, batches shipped over HTTP — drives the real collector (estimator,
 * detectors, HTTP API) to the anomalies a user must see. Time is simulated: the fake library, the agent and the
 * collector share one clock advanced a second per poll, so minutes of a run take seconds of test.
 */
class AgentToCollectorIT {
    private static final long GIB = 1L << 30;
    private static final long TOTAL = 80 * GIB;
    private static final double EPOCH = 1_800_000_000.0;
    private static final String UUID = "GPU-0a0a0a0a-1b1b-2c2c-3d3d-4e4e4e4e4e4e";

    @TempDir
    Path dir;

    /** One clock for the fake library's timeline, the agent and the collector. */
    private final SettableClock clock = new SettableClock(Instant.ofEpochMilli(Math.round(EPOCH * 1000)));
    private final HttpClient http = HttpClient.newHttpClient();
    private final Path library = FakeNvml.library();
    private final FakeNvml.Control fake = FakeNvml.control(library);
    private Process trainer;
    private CollectorStack collector;
    private Agent agent;
    private NvmlGpuReader gpus;
    private LogTailer log;

    @BeforeEach
    void startTrainer() throws Exception {
        // A stand-in for the training process: NVML lists its PID, the agent reads its environment from /proc.
        ProcessBuilder builder = new ProcessBuilder("sleep", "600");
        builder.environment().put("RANK", "0");
        builder.environment().put("LOCAL_RANK", "0");
        builder.environment().put("WORLD_SIZE", "1");
        trainer = builder.start();
    }

    @AfterEach
    void stopEverything() {
        if (agent != null) {
            agent.close();
        }
        if (log != null) {
            log.close();
        }
        if (gpus != null) {
            gpus.close();
        }
        if (collector != null) {
            collector.close();
        }
        trainer.destroyForcibly();
    }

    @Test
    void aPixArtRunWhoseDataTimeDominatesRaisesDataStarvation() throws Exception {
        FakeNvml.Scenario scenario = baseScenario(30 * GIB);
        // The loader starves the GPU: in every 9 s step the GPU idles about 7 s (the driver's samples show it).
        for (int t = 0; t < 600; t += 9) {
            scenario.at(t, 0, "util_gpu", 0).at(t + 7, 0, "util_gpu", 100);
        }
        RunSpec spec = new RunSpec("pixart-sigma-xl-2", "a100-80gb", 1, 4, 512, null, null, null, "fp16", "came",
                true, false, "online", 0, null, null, 100_000L);
        start(scenario, spec, "pixart-starved");

        int raisedAt = simulate(600, second -> {
            if (second % 18 == 0) {
                appendPixArtStep(second / 9, 9.2, 7.6);
            }
        }, "pixart-starved", "data_starvation");
        JsonNode run = runView("pixart-starved");
        JsonNode anomaly = anomaly(run, "data_starvation");
        assertThat(anomaly.get("message").asText()).isNotBlank();
        assertThat(anomaly.get("suggestion").asText()).isNotBlank();
        assertThat(anomaly.get("evidence").size()).isPositive();
        assertThat(run.at("/observed/data_wait_ratio").asDouble()).isBetween(0.75, 0.9);
        assertThat(run.at("/gpus/0/uuid").asText()).isEqualTo(UUID);
        assertThat(raisedAt).as("seconds of run before data_starvation was raised").isLessThan(300);
        System.out.println("data_starvation raised after " + raisedAt + " s: " + anomaly);
    }

    @Test
    void aMemoryRampRaisesOomRiskMinutesBeforeTheCardIsFull() throws Exception {
        FakeNvml.Scenario scenario = baseScenario(50 * GIB);
        // A leak: +40 MiB every second, from 50 GiB at t=0; the card is full at t ≈ 768 s.
        scenario.at(900, 0, "memory_used", "~" + (50 * GIB + 900L * 40 * (1L << 20)));
        scenario.at(0, 0, "util_gpu", 98);
        RunSpec spec = new RunSpec("dit-xl-2", "a100-80gb", 1, 64, 256, null, null, null, "bf16", "adamw", false,
                true, "precomputed", 0, null, null, null);
        start(scenario, spec, "dit-leaking");

        int raisedAt = simulate(700, second -> {
            if (second % 20 == 0) {
                appendLine(String.format(Locale.ROOT,
                        "[\033[34m2027-01-15 08:%02d:%02d\033[0m] (step=%07d) Train Loss: 0.1500, Train Steps/Sec: 1.11%n",
                        second / 60 % 60, second % 60, second));
            }
        }, "dit-leaking", "oom_risk");
        double secondsToFull = (TOTAL - 50.0 * GIB) / (40.0 * (1 << 20)) - raisedAt;
        assertThat(secondsToFull).as("seconds left before the card is full when oom_risk was raised")
                .isGreaterThan(180);
        JsonNode anomaly = anomaly(runView("dit-leaking"), "oom_risk");
        assertThat(anomaly.get("message").asText()).isNotBlank();
        // Raised by the memory trend (not by headroom, not by a bucket estimate): the growth rate is the leak's.
        assertThat(anomaly.at("/evidence/growth_bytes_per_second").asDouble())
                .isBetween(0.9 * 40 * (1 << 20), 1.1 * 40 * (1 << 20));
        System.out.println("oom_risk raised after " + raisedAt + " s, " + secondsToFull + " s before full: " + anomaly);
    }

    @Test
    void anEightRankOpenSoraLogCountsEachStepOnceAndNamesTheDataStarvedRank() throws Exception {
        FakeNvml.Scenario scenario = baseScenario(40 * GIB);
        scenario.at(0, 0, "util_gpu", 97);
        RunSpec spec = new RunSpec("opensora-2.0", "a100-80gb", 8, 1, 256, null, null, 33, "bf16", "adamw", true,
                true, "online", 2, null, null, null);
        start(scenario, spec, "opensora-8");
        appendLine("[2027-01-15 08:00:00] Training for 1000 epochs with 2441 steps per epoch\n");

        // Open-Sora 2.0 with record_time: every 4 s each of the 8 ranks prints its timer line for the step, in the
        // order the processes happen to flush. Rank 5 waits 1.80 s for its batch; the others wait for rank 5 in
        // the all-reduce inside iter, so every rank's step takes 4.00 s.
        int[] flushOrder = {3, 6, 0, 1, 7, 4, 2, 5};
        int[] written = {0};
        simulate(400, second -> {
            if (second % 4 != 0) {
                return;
            }
            int step = written[0]++;
            StringBuilder lines = new StringBuilder();
            for (int rank : flushOrder) {
                boolean starved = rank == 5;
                lines.append(String.format(Locale.ROOT, "Rank %d | Epoch 0 | Step %d | load_data: %.2f s | "
                        + "iter: %.2f s | encode_video: 0.60 s | encode_text: 0.20 s | forward: %.2f s | "
                        + "backward: %.2f s | optim: 0.05 s | update_ema: 0.03 s | clean_cache: 0.00 s | "
                        + "checkpoint: 0.00 s | %n", rank, step, starved ? 1.80 : 0.01, starved ? 2.20 : 3.99,
                        0.50, starved ? 0.82 : 2.61));
            }
            appendLine(lines.toString());
        }, "opensora-8", "data_starvation");

        JsonNode run = runView("opensora-8");
        JsonNode starved = anomaly(run, "data_starvation");
        assertThat(starved.at("/evidence/rank").asInt()).isEqualTo(5);
        assertThat(starved.at("/evidence/ranks").asInt()).isEqualTo(8);
        assertThat(starved.get("message").asText()).startsWith("rank 5 waits for its input 65% of each 4.00 s step");
        // The run's step is rank 0's 4.00 s and 8 GPUs × 1 video per 4 s, each step counted once.
        assertThat(run.at("/observed/step_seconds").asDouble()).isEqualTo(4.0);
        assertThat(run.at("/observed/samples_per_second").asDouble()).isEqualTo(2.0);
        assertThat(run.at("/observed/last_step").asLong()).isEqualTo(written[0]);
        assertThat(run.at("/observed/data_wait_ratio").asDouble()).isCloseTo(0.45, within(1e-9));
        assertThat(run.at("/observed/ranks")).hasSize(8);
        assertThat(run.at("/observed/ranks/5/data_wait_ratio").asDouble()).isCloseTo(0.45, within(1e-9));
        assertThat(run.at("/observed/ranks/0/data_wait_ratio").asDouble()).isCloseTo(0.0025, within(1e-9));
        HttpResponse<String> scrape = http.send(HttpRequest.newBuilder(collector.server().uri().resolve("/metrics"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(scrape.body()).contains("trainwatch_run_step_seconds_count{run_id=\"opensora-8\"} "
                + written[0] + "\n");
        System.out.println("8-rank Open-Sora: data_starvation after " + 4 * written[0] + " s: " + starved);
    }

    private FakeNvml.Scenario baseScenario(long used) {
        return FakeNvml.scenario()
                .global("epoch", (long) EPOCH)
                .at(0, 0, "uuid", UUID)
                .at(0, 0, "name", "NVIDIA A100-SXM4-80GB")
                .at(0, 0, "pci", "00000000:07:00.0")
                .at(0, 0, "memory_total", TOTAL)
                .at(0, 0, "memory_used", used)
                .at(0, 0, "util_mem", 40)
                .at(0, 0, "sm_clock_mhz", 1410)
                .at(0, 0, "max_sm_clock_mhz", 1410)
                .at(0, 0, "mem_clock_mhz", 1593)
                .at(0, 0, "max_mem_clock_mhz", 1593)
                .at(0, 0, "clock_reasons", 0)
                .at(0, 0, "power_mw", 310_000)
                .at(0, 0, "power_limit_mw", 400_000)
                .at(0, 0, "temperature_c", 61)
                .at(0, 0, "pstate", 0)
                .at(0, 0, "processes", trainer.pid() + ":" + (used - GIB));
    }

    private void start(FakeNvml.Scenario scenario, RunSpec spec, String runId) throws Exception {
        fake.play(scenario.write(dir.resolve("scenario")), 0);
        collector = CollectorStack.start(CollectorConfig.defaults().withListen("127.0.0.1", 0).withClock(clock),
                line -> { });
        gpus = NvmlGpuReader.open(Optional.of(library), clock);
        Files.writeString(dir.resolve("train_log.log"), "");
        log = LogTailer.open(dir.resolve("train_log.log"), "auto", clock);
        AgentConfig config = new AgentConfig(collector.server().uri(), "node-e2e", null, runId, spec,
                Duration.ofMinutes(50), null, dir.resolve("spool"), AgentConfig.DEFAULT_SPOOL_MAX_BYTES,
                Duration.ofSeconds(5));
        agent = Agent.create(config, gpus, log, LinuxProcSource.system(), clock);
        agent.start(); // delivers; the schedule's first poll runs now, the next only in 50 minutes: the test polls
    }

    /**
     * Advances the shared clock a second at a time, polls the agent, waits for delivery, lets the collector
     * re-evaluate, until the anomaly is active or the time is up.
     *
     * @return the simulated second at which the anomaly was first seen active
     */
    private int simulate(int seconds, IntConsumer eachSecond, String runId, String kind) throws Exception {
        for (int second = 1; second <= seconds; second++) {
            clock.setSeconds(EPOCH + second);
            fake.fake_nvml_set_time(second);
            eachSecond.accept(second);
            agent.pollOnce();
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(2))
                    .until(() -> agent.pending() == 0);
            collector.fleet().tick();
            assertThat(agent.dropped()).as("batches the collector refused").isZero();
            if (second % 5 == 0 && anomalyOrNull(runView(runId), kind) != null) {
                return second;
            }
        }
        throw new AssertionError(kind + " not raised within " + seconds + " simulated seconds; run: "
                + runView(runId));
    }

    private void appendPixArtStep(int step, double timeAll, double timeData) {
        appendLine(String.format(Locale.ROOT, "Step/Epoch [%d/1][%d/5000]:total_eta: 12:00:00, "
                + "epoch_eta:1:00:00, time_all:%.3f, time_data:%.3f, lr:2.000e-05, s:(64, 64), loss:0.1234, "
                + "grad_norm:0.5678%n", step, step, timeAll, timeData));
    }

    private void appendLine(String line) {
        try {
            Files.writeString(dir.resolve("train_log.log"), line, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private JsonNode runView(String runId) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                collector.server().uri().resolve("/v1/runs/" + runId)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return Json.MAPPER.readTree(response.body());
    }

    private static JsonNode anomalyOrNull(JsonNode run, String kind) {
        for (JsonNode anomaly : run.path("anomalies")) {
            if (kind.equals(anomaly.path("kind").asText()) && anomaly.path("active").asBoolean()) {
                return anomaly;
            }
        }
        return null;
    }

    private static JsonNode anomaly(JsonNode run, String kind) {
        JsonNode anomaly = anomalyOrNull(run, kind);
        assertThat(anomaly).as("active %s in %s", kind, run).isNotNull();
        return anomaly;
    }
}
