package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.testing.Python;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code trainwatch watch} end to end, in a separate JVM, reading the fake {@code libnvidia-ml.so.1} the agent module
 * builds against NVIDIA's header (so the real JNA path runs) and a PixArt log, attached to a real process.
 */
class WatchCommandIT {

    private static final Path FAKE_NVML = Path.of("..", "agent", "target", "fake-nvml", "libnvidia-ml.so.1")
            .toAbsolutePath().normalize();
    private static final long USED_BYTES = 30_000_000_000L;

    @TempDir
    Path dir;

    private Process training;

    @AfterEach
    void stopTraining() {
        if (training != null) {
            training.destroyForcibly();
        }
    }

    private static String pixartLine(int step) {
        return String.format(Locale.ROOT, "Step/Epoch [%d/1][%d/5000]:total_eta: 1:02:03, epoch_eta:0:40:00, "
                + "time_all:1.500, time_data:0.900, lr:2.000e-05, s:(128, 128), loss:0.1234, grad_norm:0.5000%n", step, step);
    }

    private Path scenario(long pid) throws Exception {
        long now = System.currentTimeMillis() / 1000;
        String text = String.join("\n",
                "0 - driver 550.54.15",
                "0 - epoch " + now,
                "0 0 uuid GPU-0a0a0a0a-1b1b-2c2c-3d3d-4e4e4e4e4e4e",
                "0 0 name NVIDIA A100-SXM4-80GB",
                "0 0 pci 00000000:07:00.0",
                "0 * memory_total 85899345920",
                "0 0 memory_used " + USED_BYTES,
                "0 * util_gpu 97",
                "0 * util_mem 40",
                "0 * sm_clock_mhz 1410",
                "0 * mem_clock_mhz 1593",
                "0 * max_sm_clock_mhz 1410",
                "0 * max_mem_clock_mhz 1593",
                "0 * clock_reasons 0x0",
                "0 * power_mw 350000",
                "0 * power_limit_mw 400000",
                "0 * temperature_c 60",
                "0 * pstate 0",
                "0 0 processes " + pid + ":" + (USED_BYTES - 500_000_000L),
                "");
        Path file = dir.resolve("watch.scenario");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void watchesAnAttachedProcessItsGpuAndItsLogUntilItEnds() throws Exception {
        assertThat(FAKE_NVML).as("the agent module builds the fake NVML library").exists();
        training = new ProcessBuilder("sh", "-c", "while :; do sleep 0.2; done").start();
        Path log = dir.resolve("train_log.log");
        Files.writeString(log, "Config: \nWorld_size: 1, seed: 0\n" + pixartLine(10) + pixartLine(20));
        Map<String, String> env = Map.of("TRAINWATCH_NVML_LIBRARY", FAKE_NVML.toString(),
                "FAKE_NVML_SCENARIO", scenario(training.pid()).toString(), "FAKE_NVML_CLOCK", "wall");

        try (TrainwatchProcess watch = TrainwatchProcess.start(dir, env, "watch", "--listen", "127.0.0.1:0",
                "--attach", Long.toString(training.pid()), "--log", log.toString(), "--interval", "200ms",
                "--model", "pixart-sigma-xl-2", "--gpu", "a100-80gb", "--batch", "4", "--resolution", "1024",
                "--features", "online", "--total-steps", "5000")) {
            URI page = watch.pageUri();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
                JsonNode runs = watch.runs(page);
                assertThat(runs).hasSize(1);
                JsonNode run = runs.get(0);
                assertThat(run.path("observed").path("last_step").asLong()).isEqualTo(20);
                assertThat(run.path("observed").path("memory_used_bytes").asLong()).isEqualTo(USED_BYTES);
                assertThat(run.path("gpus").get(0).path("name").asText()).isEqualTo("NVIDIA A100-SXM4-80GB");
            });
            JsonNode run = watch.runs(page).get(0);
            assertThat(run.path("spec").path("model").asText()).isEqualTo("pixart-sigma-xl-2");
            assertThat(run.path("comparison").path("predicted_step_seconds").asDouble()).isPositive();
            assertThat(run.path("comparison").path("step_time_ratio").asDouble()).isPositive();
            assertThat(run.path("observed").path("data_wait_ratio").asDouble()).isCloseTo(0.6, org.assertj.core.data.Offset.offset(0.01));

            Files.writeString(log, pixartLine(30), StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300))
                    .until(() -> watch.runs(page).get(0).path("observed").path("last_step").asLong() == 30);
            assertThat(watch.getJson(page.resolve("healthz"))).isNotNull();

            training.destroy();
            assertThat(watch.waitFor(Duration.ofSeconds(60))).isZero();
            assertThat(watch.stdout()).contains("trainwatch watch: page " + page).contains("trainwatch: ended ");
            assertThat(watch.stderr()).doesNotContain("Exception");
        }
    }

    /**
     * Attached to a kohya Flux LoRA run with no spec typed: the run's spec comes from the process's command line and
     * the TOML it names (resolved against the process's working directory), with what was not found as a note.
     */
    @Test
    void attachedToAKohyaRunWithoutASpecItReadsTheCommandLine() throws Exception {
        Path job = Files.createDirectories(dir.resolve("job"));
        Files.writeString(job.resolve("flux.toml"), "pretrained_model_name_or_path = \"/models/flux1-dev.safetensors\"\n"
                + "network_module = \"networks.lora_flux\"\nnetwork_dim = 32\nfp8_base = true\nmixed_precision = \"bf16\"\n"
                + "train_batch_size = 1\nresolution = \"1024,1024\"\ndataset_config = \"dataset.toml\"\n");
        training = new ProcessBuilder(Python.executable(), "-c", "import time; time.sleep(120)", "flux_train_network.py",
                "--config_file", "flux.toml", "--network_dim", "16").directory(job.toFile()).start();
        Map<String, String> env = Map.of("TRAINWATCH_NVML_LIBRARY", FAKE_NVML.toString(),
                "FAKE_NVML_SCENARIO", scenario(training.pid()).toString(), "FAKE_NVML_CLOCK", "wall");
        try (TrainwatchProcess watch = TrainwatchProcess.start(dir, env, "watch", "--listen", "127.0.0.1:0",
                "--attach", Long.toString(training.pid()), "--interval", "200ms")) {
            URI page = watch.pageUri();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
                JsonNode spec = watch.runs(page).path(0).path("spec");
                assertThat(spec.path("model").asText()).isEqualTo("flux.1-dev");
                assertThat(spec.path("lora_rank").asInt()).isEqualTo(16);
                assertThat(spec.path("base_weights").asText()).isEqualTo("fp8");
                assertThat(spec.path("notes").path(0).asText()).startsWith("dataset TOML dataset.toml not found");
            });
            assertThat(watch.runs(page).get(0).path("estimate").path("peak_memory_bytes").asLong()).isPositive();
        }
    }


    @Test
    void withNoTrainingProcessOnTheGpusItSaysSo() throws Exception {
        String noProcesses = Files.readString(scenario(1)).lines().filter(l -> !l.contains(" processes "))
                .reduce("", (a, b) -> a + b + "\n");
        Path file = dir.resolve("idle.scenario");
        Files.writeString(file, noProcesses);
        Map<String, String> env = Map.of("TRAINWATCH_NVML_LIBRARY", FAKE_NVML.toString(),
                "FAKE_NVML_SCENARIO", file.toString(), "FAKE_NVML_CLOCK", "wall");
        try (TrainwatchProcess watch = TrainwatchProcess.start(dir, env, "watch", "--listen", "127.0.0.1:0",
                "--interval", "200ms")) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300))
                    .until(() -> watch.stdout().contains("nothing to watch yet: no training process on the GPUs"));
            assertThat(watch.runs(watch.pageUri())).isEmpty();
        }
    }

    @Test
    void aRunSpecTheEstimatorCannotPriceIsAUsageErrorInOneLine() throws Exception {
        try (TrainwatchProcess watch = TrainwatchProcess.start(dir, Map.of(), "watch", "--listen", "127.0.0.1:0",
                "--model", "no-such-model", "--gpu", "a100-80gb")) {
            assertThat(watch.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.USAGE);
            assertThat(watch.stderr().strip()).startsWith("trainwatch: ").contains("no-such-model").doesNotContain("\n");
        }
    }

    @Test
    void withoutNvmlItSaysWhyInOneLineSuggestsTheDemoAndExits3() throws Exception {
        try (TrainwatchProcess watch = TrainwatchProcess.start(dir,
                Map.of("TRAINWATCH_NVML_LIBRARY", dir.resolve("libnvidia-ml.so.1").toString()),
                "watch", "--listen", "127.0.0.1:0")) {
            assertThat(watch.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.NVML_UNAVAILABLE);
            String err = watch.stderr().strip();
            assertThat(err).startsWith("trainwatch: NVML unavailable: ").contains("trainwatch demo").doesNotContain("\n");
            assertThat(watch.stdout()).isEmpty();
        }
    }

    @Test
    void theRealDriverlessLibrarySaysDriverNotLoaded() throws Exception {
        Path real = Path.of("..", "build-deps", "libnvidia-ml.so.1.real").toAbsolutePath().normalize();
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(real), "build-deps not installed");
        try (TrainwatchProcess watch = TrainwatchProcess.start(dir, Map.of("TRAINWATCH_NVML_LIBRARY", real.toString()),
                "watch", "--listen", "127.0.0.1:0")) {
            assertThat(watch.waitFor(Duration.ofSeconds(60))).isEqualTo(ExitCodes.NVML_UNAVAILABLE);
            assertThat(watch.stderr().strip()).containsIgnoringCase("driver").doesNotContain("\n");
        }
    }
}
