package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hardware activity counters end to end: the fake {@code libnvidia-ml.so.1} plays two H100s with GPM and NVLink,
 * the real agent reads them through JNA and ships them, the real collector exports them on {@code /metrics}, and a
 * real Prometheus with the shipped recording rules sees GPU 1 spinning (100% "utilised", no tensor work, no DRAM or
 * NVLink traffic) while GPU 0, equally "100%", computes. Simulated time advances a second per poll; Prometheus
 * scrapes in real time.
 */
class ActivityEndToEndIT {

    private static final double EPOCH = 1_800_000_000.0;
    private static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    private final SettableClock clock = new SettableClock(Instant.ofEpochMilli(Math.round(EPOCH * 1000)));
    private final Path library = FakeNvml.library();
    private final FakeNvml.Control fake = FakeNvml.control(library);
    private Process trainer;
    private CollectorStack collector;
    private NvmlGpuReader gpus;
    private LogTailer log;
    private Agent agent;
    private int second;

    @AfterEach
    void stop() {
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
        if (trainer != null) {
            trainer.destroyForcibly();
        }
        assertThat(fake.fake_nvml_gpm_samples_live()).as("GPM samples not freed").isZero();
    }

    @Test
    void aSpinningGpuAtFullUtilisationIsToldFromAComputingOne() throws Exception {
        ProcessBuilder builder = new ProcessBuilder("sleep", "600");
        builder.environment().put("RANK", "0");
        builder.environment().put("LOCAL_RANK", "0");
        builder.environment().put("WORLD_SIZE", "1");
        trainer = builder.start();
        FakeNvml.Scenario scenario = FakeNvml.scenario().global("epoch", (long) EPOCH);
        for (int gpu = 0; gpu < 2; gpu++) {
            scenario.at(0, gpu, "uuid", "GPU-e2e00000-0000-4000-8000-00000000000" + gpu)
                    .at(0, gpu, "name", "NVIDIA H100 80GB HBM3")
                    .at(0, gpu, "memory_total", 80 * GIB).at(0, gpu, "memory_used", 60 * GIB)
                    .at(0, gpu, "util_gpu", 100).at(0, gpu, "util_mem", 40)
                    .at(0, gpu, "gpm_sm_util", 91).at(0, gpu, "gpm_sm_occupancy", 35)
                    .at(0, gpu, "gpm_any_tensor_util", 62).at(0, gpu, "gpm_hmma_tensor_util", 60)
                    .at(0, gpu, "gpm_dram_bw_util", 41).at(0, gpu, "gpm_pcie_rx_mibps", 900)
                    .at(0, gpu, "gpm_pcie_tx_mibps", 100)
                    .at(0, gpu, "nvlink_tx_kib", 0).at(0, gpu, "nvlink_rx_kib", 0)
                    .at(0, gpu, "processes", trainer.pid() + ":" + 58 * GIB);
        }
        // GPU 0 computes throughout: 40 GiB/s each way over NVLink (KiB counters).
        scenario.at(100_000, 0, "nvlink_tx_kib", "~" + 40L * 1024 * 1024 * 100_000)
                .at(100_000, 0, "nvlink_rx_kib", "~" + 40L * 1024 * 1024 * 100_000);
        // GPU 1 spins in a collective from the start: SMs "busy", tensor pipes idle, DRAM idle, NVLink flat.
        scenario.at(0, 1, "gpm_sm_util", 100).at(0, 1, "gpm_any_tensor_util", 0).at(0, 1, "gpm_hmma_tensor_util", 0)
                .at(0, 1, "gpm_dram_bw_util", 0.4).at(0, 1, "gpm_sm_occupancy", 2);
        fake.play(scenario.write(dir.resolve("scenario")), 0);

        collector = CollectorStack.start(CollectorConfig.defaults().withListen("127.0.0.1", 0).withClock(clock),
                line -> { });
        gpus = NvmlGpuReader.open(Optional.of(library), clock);
        Files.writeString(dir.resolve("train_log.log"), "");
        log = LogTailer.open(dir.resolve("train_log.log"), "auto", clock);
        AgentConfig config = new AgentConfig(collector.server().uri(), "node-activity", null, "activity-e2e", null,
                Duration.ofMinutes(50), null, dir.resolve("spool"), AgentConfig.DEFAULT_SPOOL_MAX_BYTES,
                Duration.ofSeconds(5));
        agent = Agent.create(config, gpus, log, LinuxProcSource.system(), clock);
        agent.start();

        URI target = collector.server().uri();
        try (LoopbackStack stack = LoopbackStack.start(dir, target.getHost() + ":" + target.getPort())) {
            List<String> last = new ArrayList<>(List.of("not checked yet"));
            try {
                await("the spinning GPU in Prometheus").atMost(Duration.ofSeconds(120))
                        .pollInterval(Duration.ofMillis(250)).until(() -> {
                            pollOneSecond();
                            String problem = problem(stack);
                            last.set(0, String.valueOf(problem));
                            return problem == null;
                        });
            } catch (ConditionTimeoutException e) {
                fail("timed out: " + last.get(0) + "\n" + stack.logs());
            }
            assertThat(value(stack, "trainwatch_gpu_tensor_active_ratio{gpu=\"0\"}")).isEqualTo(0.62);
            assertThat(value(stack, "trainwatch_gpu_sm_active_ratio{gpu=\"1\"}")).isEqualTo(1.0);
            assertThat(value(stack, "trainwatch_gpu_pcie_rx_bytes_per_second{gpu=\"0\"}")).isEqualTo(900.0 * (1 << 20));
            assertThat(value(stack, "run_id:trainwatch_gpu_spinning:gpus{run_id=\"activity-e2e\"}")).isEqualTo(1.0);
        }
        String scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(target.resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(scrape).contains("trainwatch_gpu_sm_occupancy_ratio{", "trainwatch_gpu_dram_active_ratio{",
                "trainwatch_gpu_nvlink_rx_bytes_total{", "trainwatch_gpu_pcie_tx_bytes_per_second{");
        assertThat(agent.dropped()).as("batches the collector refused").isZero();
    }

    @Test
    void aWrongSpecIsCaughtByTheTwoMfusAndItsAlertFiresInPrometheus() throws Exception {
        ProcessBuilder builder = new ProcessBuilder("sleep", "600");
        builder.environment().put("RANK", "0");
        builder.environment().put("LOCAL_RANK", "0");
        builder.environment().put("WORLD_SIZE", "1");
        trainer = builder.start();
        collector = CollectorStack.start(CollectorConfig.defaults().withListen("127.0.0.1", 0).withClock(clock),
                line -> { });
        URI target = collector.server().uri();
        HttpClient http = HttpClient.newHttpClient();
        // The spec says batch 32; the run really trains at batch 8: its steps take a quarter of the predicted time.
        JsonNode estimate = dev.trainwatch.protocol.Json.MAPPER.readTree(http.send(HttpRequest.newBuilder(
                target.resolve("/v1/runs/wrong-spec")).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"h100-sxm\","
                        + "\"gpus\":1,\"batch\":32,\"resolution\":1024,\"precision\":\"bf16\","
                        + "\"features\":\"precomputed\",\"kernels\":\"compiled\",\"attention_precision\":\"half\"}"))
                        .build(), HttpResponse.BodyHandlers.ofString()).body())
                .path("estimate");
        double predictedStep = estimate.path("step_seconds").asDouble();
        JsonNode flops = estimate.path("flops");
        double predictedHfu = flops.path("hardware_per_sample").asDouble() * 32 / predictedStep
                / flops.path("peak_per_gpu").asDouble();
        assertThat(predictedHfu).as("the estimate's HFU at its own step time").isBetween(0.005, 1.0);
        // The tensor pipes run at what the real batch-8 run does at that pace: the estimate's HFU.
        FakeNvml.Scenario scenario = FakeNvml.scenario().global("epoch", (long) EPOCH)
                .at(0, 0, "uuid", "GPU-e2e00000-0000-4000-8000-00000000000a").at(0, 0, "name", "NVIDIA H100 80GB HBM3")
                .at(0, 0, "memory_total", 80 * GIB).at(0, 0, "memory_used", 40 * GIB).at(0, 0, "util_gpu", 97)
                .at(0, 0, "gpm_sm_util", 90).at(0, 0, "gpm_any_tensor_util", 100 * predictedHfu)
                .at(0, 0, "gpm_dram_bw_util", 40).at(0, 0, "processes", trainer.pid() + ":" + 38 * GIB);
        fake.play(scenario.write(dir.resolve("scenario")), 0);
        gpus = NvmlGpuReader.open(Optional.of(library), clock);
        Files.writeString(dir.resolve("train_log.log"), "");
        log = LogTailer.open(dir.resolve("train_log.log"), "auto", clock);
        agent = Agent.create(new AgentConfig(target, "node-spec", null, "wrong-spec", null, Duration.ofMinutes(50),
                null, dir.resolve("spool"), AgentConfig.DEFAULT_SPOOL_MAX_BYTES, Duration.ofSeconds(5)), gpus, log,
                LinuxProcSource.system(), clock);
        agent.start();
        double stepSeconds = predictedStep / 4;
        double[] nextStep = {0};
        long[] step = {0};
        try (LoopbackStack stack = LoopbackStack.start(dir, target.getHost() + ":" + target.getPort())) {
            List<String> last = new ArrayList<>(List.of("not checked yet"));
            try {
                await("spec_mismatch firing in Prometheus").atMost(Duration.ofSeconds(240))
                        .pollInterval(Duration.ofMillis(100)).until(() -> {
                            for (int k = 0; k < 4; k++) {
                                pollOneSecond();
                                while (second >= nextStep[0]) {
                                    step[0] += 2;
                                    nextStep[0] += 2 * stepSeconds;
                                    http.send(HttpRequest.newBuilder(target.resolve("/v1/runs/wrong-spec/steps"))
                                            .header("Content-Type", "application/json")
                                            .POST(HttpRequest.BodyPublishers.ofString(String.format(java.util.Locale.ROOT,
                                                    "{\"step\":%d,\"time_s\":%s,\"interval_steps\":2,\"ts\":%s}",
                                                    step[0], stepSeconds, EPOCH + second))).build(),
                                            HttpResponse.BodyHandlers.discarding());
                                }
                            }
                            JsonNode alerts = stack.prometheusAlerts();
                            for (JsonNode alert : alerts) {
                                if ("TrainwatchRunSpecMismatch".equals(alert.path("labels").path("alertname").asText())
                                        && "firing".equals(alert.path("state").asText())) {
                                    return true;
                                }
                            }
                            String view = http.send(HttpRequest.newBuilder(target.resolve("/v1/runs/wrong-spec")).build(),
                                    HttpResponse.BodyHandlers.ofString()).body();
                            last.set(0, "second " + second + ", predicted HFU " + predictedHfu + ", step "
                                    + predictedStep + ", alerts " + alerts + ", run " + view);
                            return false;
                        });
            } catch (ConditionTimeoutException e) {
                fail("timed out: " + last.get(0) + "\n" + stack.logs());
            }
            // The two MFUs, side by side where a dashboard or user reads them
            double hardware = value(stack, "trainwatch_run_hardware_mfu_ratio{run_id=\"wrong-spec\"}");
            double hfu = value(stack, "trainwatch_run_hfu_ratio{run_id=\"wrong-spec\"}");
            assertThat(hardware).isCloseTo(predictedHfu, org.assertj.core.data.Offset.offset(0.01));
            assertThat(hfu / hardware).as("the spec's FLOPs over the tensor pipes").isGreaterThan(3.5);
        }
        JsonNode run = dev.trainwatch.protocol.Json.MAPPER.readTree(http.send(HttpRequest.newBuilder(
                target.resolve("/v1/runs/wrong-spec")).build(), HttpResponse.BodyHandlers.ofString()).body());
        JsonNode anomaly = null;
        for (JsonNode a : run.path("anomalies")) {
            if ("spec_mismatch".equals(a.path("kind").asText())) {
                anomaly = a;
            }
        }
        assertThat(anomaly).as("spec_mismatch in %s", run.path("anomalies")).isNotNull();
        assertThat(anomaly.path("message").asText()).contains("the spec describes a larger job");
    }

    /** One simulated second: the fake's clock, the agent's and the collector's; one poll, delivered. */
    private void pollOneSecond() throws Exception {
        second++;
        clock.setSeconds(EPOCH + second);
        fake.fake_nvml_set_time(second);
        agent.pollOnce();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(2)).until(() -> agent.pending() == 0);
        collector.fleet().tick();
    }

    /** Null once Prometheus has the rules' verdict on both GPUs and the NVLink rate of the computing one. */
    private static String problem(LoopbackStack stack) {
        JsonNode spinning = stack.query("host_gpu:trainwatch_gpu_spinning:bool");
        JsonNode nvlink = stack.query("host_gpu:trainwatch_gpu_nvlink_bytes:rate5m{gpu=\"0\"} > 0");
        boolean both = spinning.size() == 2;
        if (!both || nvlink.isEmpty()) {
            return "spinning: " + spinning + ", NVLink of GPU 0: " + nvlink;
        }
        for (JsonNode s : spinning) {
            double v = s.path("value").get(1).asDouble();
            String gpu = s.path("metric").path("gpu").asText();
            if (gpu.equals("0") && v != 0 || gpu.equals("1") && v != 1) {
                return "GPU " + gpu + " spinning = " + v;
            }
        }
        return null;
    }

    private static double value(LoopbackStack stack, String query) {
        JsonNode result = stack.query(query);
        assertThat(result).as(query).hasSize(1);
        return result.get(0).path("value").get(1).asDouble();
    }
}
