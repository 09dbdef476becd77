package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EstimateCommandTest {

    /** The faithful config copies live with the estimator's tests. */
    private static final Path FIXTURES = Path.of("..", "estimator", "src", "test", "resources", "configs");
    private static final Path SIGMA = FIXTURES.resolve("pixart-sigma/configs/pixart_sigma_config/PixArt_sigma_xl2_img1024_internalms.py");
    private static final Path SANA = FIXTURES.resolve("sana/configs/sana_config/1024ms/Sana_1600M_img1024.yaml");

    record Result(int status, String out, String err) {
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = TrainwatchCommand.newCommandLine(new PrintWriter(out), new PrintWriter(err)).execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    @Test
    void aWholeRunIsPricedInGpuHoursAndCostAndItsMfuIsShown() {
        // The seeds' question: PixArt-Sigma took about 17 days on 32 V100s; what will mine take, and cost?
        Result r = run("estimate", "--model", "pixart-sigma-xl-2", "--gpu", "a100-80gb", "--gpus", "32", "--batch", "12",
                "--resolution", "1024", "--features", "precomputed", "--total-steps", "50000", "--gpu-hour-price",
                "a100-80gb=1.79,*=3");
        assertThat(r.status()).isZero();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("total time +\\S.* for 50,000 steps, ([0-9,]+) "
                + "GPU-hours, cost ([0-9,]+) at 1\\.79 per GPU-hour").matcher(r.out());
        assertThat(m.find()).as(r.out()).isTrue();
        double gpuHours = Double.parseDouble(m.group(1).replace(",", ""));
        // Both printed rounded to whole numbers: the cost of the rounded hours within half an hour's price.
        assertThat(Double.parseDouble(m.group(2).replace(",", ""))).isCloseTo(gpuHours * 1.79, within(0.5 * 1.79 + 0.5));
        assertThat(r.out()).containsPattern("model FLOP use +\\d+\\.\\d% of the GPUs' dense fp16 peak");
        Result bad = run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--gpu-hour-price", "cheap");
        assertThat(bad.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(bad.err().strip()).isEqualTo("trainwatch: --gpu-hour-price: price 'cheap' is not a number (e.g. 2.5 or "
                + "a100-80gb=1.79)");
    }

    @Test
    void printsATableWithBreakdownNotesAndSuggestions() {
        Result r = run("estimate", "--model", "sana-1600m", "--gpu", "a40", "--batch", "1", "--resolution", "1024",
                "--optimizer", "came", "--features", "online");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("sana-1600m on 1 x a40, batch 1 per GPU at 1024 px")
                .contains("memory breakdown").contains("optimizer").contains("frozen_encoders")
                .contains("DOES NOT FIT").contains("use AdamW instead of CAME").contains("[O, I, 1, 1]");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void openSoraConfigsResolveWithTheReadersNotesInTheOutput() throws IOException {
        Path stage1 = FIXTURES.resolve("opensora/configs/diffusion/train/stage1.py");
        Result r = run("estimate", "--config", stage1.toString(), "--gpu", "h100-sxm", "--gpus", "8");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("opensora-2.0 on 8 x h100-sxm, 35 buckets (largest memory: batch ")
                .contains("bf16, mixed weights")
                .contains("checkpointing blocks 8+38").contains("master_weights")
                .contains("stage1.py: grad_ckpt_settings [8, 100]").contains("35 buckets priced");
        Result json = run("estimate", "--config", stage1.toString(), "--gpu", "h100-sxm", "--gpus", "8", "--json");
        JsonNode node = Json.MAPPER.readTree(json.out());
        assertThat(node.get("spec").get("weights").asText()).isEqualTo("mixed");
        assertThat(node.get("notes").get(0).asText()).startsWith("stage1.py: ");
        Result share = run("estimate", "--model", "opensora-2.0", "--gpu", "h200", "--gpus", "8", "--weights", "mixed",
                "--zero", "2", "--grad-checkpointing", "--checkpoint-blocks", "50%", "--json");
        assertThat(Json.MAPPER.readTree(share.out()).get("spec").get("checkpoint_blocks").toString()).isEqualTo("[10,19]");
        Result noModel = run("estimate", "--gpu", "h200", "--checkpoint-blocks", "50%");
        assertThat(noModel.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(noModel.err().strip()).isEqualTo("trainwatch: --checkpoint-blocks 50% needs the model (--model or --config)");
        assertThat(run("estimate", "--model", "dit-xl-2", "--gpu", "h200", "--checkpoint-blocks", "half").err().strip())
                .isEqualTo("trainwatch: --checkpoint-blocks wants block counts or shares (8,38 or 50%), got 'half'");
        Path alpha = FIXTURES.resolve("pixart-alpha/configs/pixart_config/PixArt_xl2_img1024_internal.py");
        Result a = run("estimate", "--config", alpha.toString(), "--gpu", "a100-80gb", "--vae-features", "online");
        assertThat(a.out()).contains("features text precomputed/VAE online").contains("EMA on");
    }

    @Test
    void jsonIsOneObjectPerTheContract() throws IOException {
        Result r = run("estimate", "--model", "dit-xl-2", "--gpu", "NVIDIA A100-SXM4-80GB", "--gpus", "8", "--batch",
                "32", "--precision", "tf32", "--no-grad-checkpointing", "--ema", "--total-steps", "400000", "--json");
        assertThat(r.status()).isZero();
        JsonNode json = Json.MAPPER.readTree(r.out());
        assertThat(json.get("model").asText()).isEqualTo("dit-xl-2");
        assertThat(json.get("gpu").asText()).isEqualTo("a100-80gb");
        assertThat(json.get("params").asLong()).isEqualTo(675_129_632L);
        assertThat(json.get("spec").get("gpus").asInt()).isEqualTo(8);
        assertThat(json.get("spec").get("grad_checkpointing").asBoolean()).isFalse();
        assertThat(json.get("fits").asBoolean()).isTrue();
        assertThat(json.get("total_seconds").asDouble()).isGreaterThan(0);
        for (String key : new String[] {"trainable_params", "peak_memory_bytes", "gpu_memory_bytes", "max_batch",
                "step_seconds", "samples_per_second", "breakdown", "suggestions"}) {
            assertThat(json.has(key)).as(key).isTrue();
        }
        assertThat(r.out().strip().lines().count()).isEqualTo(1);
    }

    @Test
    void readsBothConfigFixturesAndFlagsOverrideThem() throws IOException {
        Result sigma = run("estimate", "--config", SIGMA.toString(), "--gpu", "a100-80gb", "--json");
        assertThat(sigma.status()).as(sigma.err()).isZero();
        JsonNode s = Json.MAPPER.readTree(sigma.out());
        assertThat(s.get("model").asText()).isEqualTo("pixart-sigma-xl-2");
        assertThat(s.get("spec").get("resolution").asInt()).isEqualTo(1024);
        assertThat(s.get("spec").get("batch").asInt()).isEqualTo(2);
        assertThat(s.get("spec").get("optimizer").asText()).isEqualTo("came");
        assertThat(s.get("spec").get("features").asText()).isEqualTo("online");

        Result sana = run("estimate", "--config", SANA.toString(), "--gpu", "a40", "--batch", "1", "--json");
        assertThat(sana.status()).as(sana.err()).isZero();
        JsonNode n = Json.MAPPER.readTree(sana.out());
        assertThat(n.get("model").asText()).isEqualTo("sana-1600m");
        assertThat(n.get("spec").get("batch").asInt()).isEqualTo(1);
        assertThat(n.get("spec").get("precision").asText()).isEqualTo("fp16");
        assertThat(n.get("spec").get("grad_checkpointing").asBoolean()).isTrue();
    }

    @Test
    void unknownIdsAndImpossibleValuesExitTwoWithOneLine() {
        Result model = run("estimate", "--model", "pixart-sigmaa", "--gpu", "a100-80gb");
        assertThat(model.status()).isEqualTo(2);
        assertThat(model.err().strip()).startsWith(
                "trainwatch: unknown model 'pixart-sigmaa'; nearest: pixart-sigma-xl-2, pixart-alpha-xl-2").contains("see 'trainwatch models'").endsWith("with --catalog FILE)");
        assertThat(model.err().strip().lines().count()).isEqualTo(1);

        // "a100" used to pick a100-40gb silently; 40 and 80 GB cards give different verdicts.
        for (String family : new String[] {"a100", "v100", "h100"}) {
            Result gpu = run("estimate", "--model", "dit-xl-2", "--gpu", family);
            assertThat(gpu.status()).as(family).isEqualTo(2);
            assertThat(gpu.err().strip()).startsWith("trainwatch: GPU '" + family + "' is ambiguous: ")
                    .contains(family + "-").doesNotContain("\n");
        }
        assertThat(run("estimate", "--model", "dit-xl-2", "--gpu", "a100").err())
                .contains("a100-40gb, a100-80gb, a100-pcie-80gb");
        assertThat(run("estimate", "--model", "dit-xl-2", "--gpu", "NVIDIA A100-SXM4-80GB").status()).isZero();
        // b200 is in the catalog since issue #10; an unknown id still gets the nearest ones.
        Result badGpu = run("estimate", "--model", "dit-xl-2", "--gpu", "b300");
        assertThat(badGpu.status()).isEqualTo(2);
        assertThat(badGpu.err()).startsWith("trainwatch: unknown GPU 'b300'; nearest:");
        assertThat(badGpu.err().strip().lines().count()).isEqualTo(1);

        Result batch = run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--batch", "0");
        assertThat(batch.status()).isEqualTo(2);
        assertThat(batch.err().strip()).isEqualTo("trainwatch: batch must be at least 1, got 0");

        Result grid = run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--resolution", "300");
        assertThat(grid.status()).isEqualTo(2);
        assertThat(grid.err()).contains("divisible by 16");

        Result none = run("estimate", "--gpu", "a100-80gb");
        assertThat(none.status()).isEqualTo(2);
        assertThat(none.err()).contains("no model given");
    }

    @Test
    void aBrokenConfigIsOneLineAndExitTwo(@TempDir Path dir) throws IOException {
        Path bad = dir.resolve("bad.py");
        Files.writeString(bad, "model = 'PixArt_XL_2'\noptimizer = dict(type='AdamW',\n");
        Result r = run("estimate", "--config", bad.toString(), "--gpu", "a100-80gb");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err().strip()).startsWith("trainwatch: " + bad + ":").contains("never closed");
        assertThat(r.err().strip().lines().count()).isEqualTo(1);
    }

    @Test
    void modelsAndGpusListTheCatalogs() throws IOException {
        Result models = run("models");
        assertThat(models.status()).isZero();
        assertThat(models.out()).contains("dit-xl-2").contains("675,129,632").contains("sana-1600m").contains("opensora-2.0");
        Result gpus = run("gpus");
        assertThat(gpus.status()).isZero();
        assertThat(gpus.out()).contains("a800-80gb").contains("NVIDIA A800 80GB PCIe").contains("h200");
        JsonNode json = Json.MAPPER.readTree(run("gpus", "--json").out());
        assertThat(json.size()).isGreaterThanOrEqualTo(15);
        JsonNode modelsJson = Json.MAPPER.readTree(run("models", "--json").out());
        assertThat(modelsJson.get(0).has("family")).isTrue();
        // The whole architecture, as bench/gpu/probe.py builds each model from it.
        JsonNode sana = StreamSupport.stream(modelsJson.spliterator(), false)
                .filter(m -> m.path("id").asText().equals("sana-1600m")).findFirst().orElseThrow();
        assertThat(sana.path("architecture").asText()).isEqualTo("sana");
        assertThat(sana.path("head_dim").asInt()).isEqualTo(32);
        assertThat(sana.path("ffn_hidden").asInt()).isEqualTo(5600);
        assertThat(sana.path("caption_channels").asInt()).isEqualTo(2304);
    }

    @org.junit.jupiter.api.Test
    void withADataDirTheEstimateIsTheCollectorsCalibratedOneAndSaysSo(@org.junit.jupiter.api.io.TempDir Path dir) {
        String[] args = {"estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--batch", "32", "--resolution",
                "256", "--data-dir", dir.toString()};
        Result missing = run(args);
        assertThat(missing.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err().strip()).isEqualTo("trainwatch: no run history in " + dir
                + " (a collector started with --data-dir " + dir + " writes it)");

        java.time.Instant t = java.time.Instant.parse("2026-11-20T08:00:00Z");
        try (var store = dev.trainwatch.collector.history.HistoryStore.open(dir)) {
            store.writeSummaries(java.util.List.of(), java.util.List.of(new dev.trainwatch.collector.history.RunOutcome(
                    "dit-0", "a100-80gb", "dit", 1.0, 1.4, 40L, 40L, t)));
        }
        Result one = run(args);
        assertThat(one.out()).contains("calibration       not calibrated: 1 of the 3 finished runs needed on a100-80gb/dit");
        double raw = stepSeconds(run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--batch", "32",
                "--resolution", "256").out());
        assertThat(stepSeconds(one.out())).isEqualTo(raw);

        try (var store = dev.trainwatch.collector.history.HistoryStore.open(dir)) {
            for (int i = 1; i < 3; i++) {
                store.writeSummaries(java.util.List.of(), java.util.List.of(
                        new dev.trainwatch.collector.history.RunOutcome("dit-" + i, "a100-80gb", "dit", 1.0, 1.4,
                                40L, 40L, t.plusSeconds(i))));
            }
        }
        Result three = run(args);
        assertThat(three.out()).contains("calibration       calibrated on a100-80gb/dit from 3 finished run(s): "
                + "step time x1.22, memory x1.00");
        assertThat(stepSeconds(three.out()) / raw).isBetween(1.2, 1.25);
    }

    @Test
    void compareGpusPlansTheSameRunSideBySideWithTimeAndCost() throws IOException {
        Result r = run("estimate", "--model", "pixart-sigma-xl-2", "--compare-gpus", "a100-80gb,h100-sxm,l40s",
                "--gpus", "8", "--batch", "8", "--images", "30000000", "--epochs", "1", "--gpu-hour-price",
                "a100-80gb=1.8,h100-sxm=2.9,l40s=1");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("GPU").contains("TO FINISH").contains("a100-80gb").contains("h100-sxm")
                .contains("l40s: batch 8 does not fit: priced as 4 x 2 accumulation steps");
        Result json = run("estimate", "--model", "pixart-sigma-xl-2", "--compare-gpus", "a100-80gb,l40s", "--gpus", "8",
                "--batch", "8", "--images", "30000000", "--gpu-hour-price", "1.5", "--json");
        JsonNode plans = Json.MAPPER.readTree(json.out()).get("plans");
        assertThat(plans).hasSize(2);
        JsonNode a100 = plans.get(0);
        assertThat(a100.get("gpu").asText()).isEqualTo("a100-80gb");
        assertThat(a100.get("total_steps").asLong()).isEqualTo((long) Math.ceil(30_000_000 / 64.0));
        assertThat(a100.get("cost").asDouble()).isCloseTo(a100.get("gpu_hours").asDouble() * 1.5, within(1e-6));
        assertThat(plans.get(1).get("grad_accumulation").asInt()).isEqualTo(2);
        Result bad = run("estimate", "--model", "pixart-sigma-xl-2", "--compare-gpus", "a100-80gb,h900");
        assertThat(bad.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(bad.err()).contains("unknown GPU 'h900'").doesNotContain("Exception");
    }

    @Test
    void fromRunRepricesAnObservedRunOnOtherHardwareReadingTheHistoryReadOnly(@TempDir Path dir) throws IOException {
        Result none = run("estimate", "--from-run", "dit-a", "--gpu", "h100-sxm", "--data-dir", dir.toString());
        assertThat(none.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(none.err().strip()).isEqualTo("trainwatch: no run history in " + dir
                + " (a collector started with --data-dir " + dir + " writes it)");
        dev.trainwatch.protocol.RunSpec spec = new dev.trainwatch.protocol.RunSpec("dit-xl-2", "a100-80gb", 1, 128, 256,
                null, null, null, "fp16", "adamw", true, true, "precomputed", 0, null, null, 400_000L);
        java.time.Instant t = java.time.Instant.parse("2026-11-20T08:00:00Z");
        String summary = "{\"run_id\":\"dit-a\",\"first_seen_ts\":1,\"ended\":false,\"last_step\":100000,"
                + "\"step_seconds\":1.19}";
        try (var store = dev.trainwatch.collector.history.HistoryStore.open(dir)) {
            store.saveRun("dit-a", Json.MAPPER.writeValueAsString(spec), null, t);
            store.writeSummaries(java.util.List.of(new dev.trainwatch.collector.history.HistoryStore.SummaryWrite(
                    "dit-a", summary, t, t, null)), java.util.List.of());
        }
        long size = Files.size(dir.resolve("trainwatch.db"));
        Result r = run("estimate", "--from-run", "dit-a", "--gpu", "h100-sxm", "--gpus", "8", "--data-dir", dir.toString());
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("run dit-a: dit-xl-2 on 1 x a100-80gb, batch 128 per GPU: observed 1.190 s per step")
                .contains("h100-sxm").contains("left").contains("where the step goes on h100-sxm (anchored)");
        Result json = run("estimate", "--from-run", "dit-a", "--gpu", "h100-sxm", "--gpus", "8", "--data-dir",
                dir.toString(), "--json");
        JsonNode repricing = Json.MAPPER.readTree(json.out()).get("repricing");
        double anchor = repricing.get("model_anchor").asDouble();
        assertThat(repricing.get("step_seconds").asDouble())
                .isCloseTo(repricing.get("target").get("step_seconds").asDouble() * anchor, within(1e-6));
        // Eight times the GPUs at the same per-GPU batch: an eighth of the planned steps for the same samples.
        assertThat(repricing.get("target").get("spec").get("total_steps").asLong()).isEqualTo(50_000L);
        Result unknown = run("estimate", "--from-run", "dit-b", "--gpu", "h100-sxm", "--data-dir", dir.toString());
        assertThat(unknown.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.err()).contains("no run 'dit-b'").contains("dit-a");
        Result noDir = run("estimate", "--from-run", "dit-a", "--gpu", "h100-sxm");
        assertThat(noDir.err().strip()).isEqualTo("trainwatch: --from-run needs --data-dir DIR (the collector's data directory)");
        assertThat(Files.size(dir.resolve("trainwatch.db"))).isEqualTo(size);
    }

    @Test
    void loraAndWhyAreInTheTable() {
        Result r = run("estimate", "--model", "pixart-sigma-xl-2", "--gpu", "rtx4090", "--precision", "bf16",
                "--features", "precomputed", "--lora-rank", "16", "--lora-targets", "attention,cross_attention");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).containsPattern("parameters +611,349,152 \\([0-9,]+ trainable\\)")
                .contains("where the step goes");
        Result both = run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--lora-rank", "8",
                "--train-modules", "final");
        assertThat(both.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(both.err()).contains("--train-modules is a frozen-backbone fine-tune");
    }

    @Test
    void aFluxLoraOnA24GbCardWithTheTrainersLevers() throws IOException {
        String[] flux = {"estimate", "--model", "flux-dev", "--gpu", "rtx4090", "--batch", "1", "--resolution", "1024",
            "--lora-rank", "16", "--lora-targets", "attention,mlp,modulation", "--optimizer", "adamw8bit",
            "--base-weights", "fp8", "--blocks-to-swap", "18"};
        Result r = run(flux);
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("flux.1-dev on 1 x rtx4090").contains("fp8 base weights, 18 blocks swapped")
                .containsPattern("sampling peak +[0-9.]+ GiB of [0-9.]+ GiB +fits")
                .containsPattern("host memory +[0-9.]+ GiB peak, [0-9.]+ GiB of it pinned for swapped blocks");
        String[] json = java.util.Arrays.copyOf(flux, flux.length + 1);
        json[flux.length] = "--json";
        JsonNode e = Json.MAPPER.readTree(run(json).out());
        assertThat(e.get("spec").get("base_weights").asText()).isEqualTo("fp8");
        assertThat(e.get("spec").get("blocks_to_swap").asInt()).isEqualTo(18);
        assertThat(e.get("host_memory_bytes").asLong()).isPositive();
        assertThat(e.get("host_breakdown").has("pinned_swap_blocks")).isTrue();
        assertThat(e.get("sampling_peak_memory_bytes").asLong()).isPositive();
        assertThat(e.get("fits").asBoolean()).isTrue();
        Result bad = run("estimate", "--model", "flux.1-dev", "--gpu", "rtx4090", "--lora-rank", "16", "--base-weights", "fp4");
        assertThat(bad.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(bad.err().strip()).isEqualTo("trainwatch: unknown base_weights 'fp4'; choose one of bf16, fp16, fp8, int8,"
                + " int4, nf4");
    }

    private static double stepSeconds(String table) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("step time\\s+([0-9.]+) s").matcher(table);
        assertThat(m.find()).as(table).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
