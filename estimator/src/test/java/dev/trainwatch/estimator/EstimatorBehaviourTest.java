package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Specs.simple;
import static dev.trainwatch.estimator.Specs.spec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EstimatorBehaviourTest {

    private final Estimator estimator = Estimator.bundled();

    @Test
    void nvmlNamesResolveToCatalogIds() {
        assertThat(estimator.catalog().resolveGpuId("NVIDIA A100-SXM4-80GB")).contains("a100-80gb");
        assertThat(estimator.catalog().resolveGpuId("NVIDIA A800 80GB PCIe")).contains("a800-80gb");
        assertThat(estimator.catalog().resolveGpuId("NVIDIA H100 80GB HBM3")).contains("h100-sxm");
        assertThat(estimator.catalog().resolveGpuId("Tesla V100-SXM2-32GB")).contains("v100-32gb");
        assertThat(estimator.catalog().resolveGpuId("NVIDIA GeForce RTX 4090")).contains("rtx4090");
        assertThat(estimator.catalog().resolveGpuId("NVIDIA A40")).contains("a40");
        assertThat(estimator.catalog().resolveGpuId("A100-80GB")).contains("a100-80gb");
        assertThat(estimator.catalog().resolveGpuId("NVIDIA B200")).contains("b200"); // added with issue #10
        assertThat(estimator.catalog().resolveGpuId("NVIDIA B300")).isEmpty();
        assertThat(estimator.catalog().resolveGpuId(null)).isEmpty();
        Estimate e = estimator.estimate(spec("dit-xl-2", "NVIDIA A100-SXM4-80GB", 1, 8, 256, null, null, null, null, null, null));
        assertThat(e.gpu()).isEqualTo("a100-80gb");
        assertThat(e.spec().gpu()).isEqualTo("a100-80gb");
    }

    @Test
    void catalogLookupsGiveFamilyAndLatentDownsampling() {
        assertThat(estimator.catalog().model("pixart-sigma-xl-2").orElseThrow().family()).isEqualTo("pixart");
        assertThat(estimator.catalog().model("pixart-sigma-xl-2").orElseThrow().latentDownsample()).isEqualTo(8);
        assertThat(estimator.catalog().model("sana-1600m").orElseThrow().family()).isEqualTo("sana");
        assertThat(estimator.catalog().model("sana-1600m").orElseThrow().latentDownsample()).isEqualTo(32);
        assertThat(estimator.catalog().model("dit-xl-2").orElseThrow().family()).isEqualTo("dit");
        assertThat(estimator.catalog().model("opensora-1.2").orElseThrow().family()).isEqualTo("opensora");
    }

    @Test
    void unknownIdsSuggestTheNearestOnes() {
        assertThatThrownBy(() -> estimator.estimate(simple("pixart-sigma", "a100-80gb", 1)))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageStartingWith("unknown model 'pixart-sigma'; nearest: pixart-sigma-xl-2");
        assertThatThrownBy(() -> estimator.estimate(simple("dit-xl-2", "a100-80", 1)))
                .hasMessageStartingWith("unknown GPU 'a100-80'; nearest: a100-80gb");
    }

    @Test
    void impossibleValuesAreRefusedInOneLine() {
        assertThatThrownBy(() -> estimator.estimate(simple("dit-xl-2", "a100-80gb", 0)))
                .isInstanceOf(InvalidSpecException.class).hasMessage("batch must be at least 1, got 0");
        assertThatThrownBy(() -> estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 1, 250, null, null, null, null, null, null)))
                .hasMessage("dit-xl-2 needs image sides divisible by 16 (VAE /8 × patch 2); 250 is not");
        assertThatThrownBy(() -> estimator.estimate(spec("sana-1600m", "a100-80gb", 1, 1, 1000, null, null, null, null, null, null)))
                .hasMessageContaining("divisible by 32");
        assertThatThrownBy(() -> estimator.estimate(spec("dit-xl-2", "v100-32gb", 1, 1, 256, "bf16", null, null, null, null, null)))
                .hasMessage("v100-32gb has no bf16 tensor cores; use fp16");
        assertThatThrownBy(() -> estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 1, 256, "fp8", null, null, null, null, null)))
                .hasMessage("unknown precision 'fp8'; choose one of fp32, tf32, fp16, bf16");
        assertThatThrownBy(() -> estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 1, 256, null, "sophia", null, null, null, null)))
                .hasMessageStartingWith("unknown optimizer 'sophia'");
        assertThatThrownBy(() -> estimator.estimate(new RunSpec("dit-xl-2", "a100-80gb", null, 1, null, null, null, 4,
                null, null, null, null, null, null, null, null, null)))
                .hasMessage("dit-xl-2 is an image model; frames apply to video models only");
        assertThatThrownBy(() -> estimator.estimate(simple("dit-xl-2", "a100-80gb", Integer.MAX_VALUE)))
                .hasMessage("batch must be at most 1000000, got 2147483647");
        assertThat(estimator.estimate(spec("dit-s-8", "h200", 1, 1_000_000, 256, "bf16", "sgd", true, false,
                "precomputed", "flash")).maxBatch()).isBetween(1, 1_000_000);
        assertThatThrownBy(() -> estimator.estimate(new RunSpec(null, "a100-80gb", null, 1, null, null, null, null,
                null, null, null, null, null, null, null, null, null))).hasMessageStartingWith("no model given");
    }

    @Test
    void breakdownAddsUpToThePeakAndStepTermsToTheStep() {
        Estimate e = estimator.estimate(spec("pixart-sigma-xl-2", "a800-80gb", 8, 2, 1024, "fp16", "came", true, false, "online", null));
        assertThat(e.breakdown().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(e.peakMemoryBytes());
        assertThat(e.stepBreakdown().values().stream().mapToDouble(Double::doubleValue).sum())
                .isCloseTo(e.stepSeconds(), within(1e-9));
        assertThat(e.samplesPerSecond()).isCloseTo(2 * 8 / e.stepSeconds(), within(1e-9));
        assertThat(e.breakdown()).containsKeys("weights", "gradients", "optimizer", "activations", "frozen_encoders",
                "encoder_transients", "cuda_context", "allocator_overhead", "ddp_buckets", "autocast_cache", "data_batch");
    }

    @Test
    void maxBatchIsTheLargestThatFits() {
        RunSpec base = spec("dit-xl-2", "a100-40gb", 1, 64, 256, "fp16", "adamw", false, true, "precomputed", "flash");
        Estimate e = estimator.estimate(base);
        int max = e.maxBatch();
        assertThat(max).isGreaterThan(1);
        Estimate atMax = estimator.estimate(base.overriddenBy(withBatch(max)));
        Estimate over = estimator.estimate(base.overriddenBy(withBatch(max + 1)));
        assertThat(atMax.fits()).isTrue();
        assertThat(over.fits()).isFalse();
        assertThat(atMax.maxBatch()).isEqualTo(max);
        assertThat(over.maxBatch()).isEqualTo(max);
    }

    @Test
    void zeroStagesShardStatesOverTheDataParallelRanks() {
        long optimizer0 = estimator.estimate(spec("sana-1600m", "a100-80gb", 8, 1, 1024, "bf16", "adamw", true, false, "precomputed", null))
                .breakdown().get("optimizer");
        Map<String, Long> z1 = zero(1);
        Map<String, Long> z2 = zero(2);
        Map<String, Long> z3 = zero(3);
        assertThat(z1.get("optimizer")).isEqualTo(optimizer0 / 8);
        assertThat(z1.get("gradients")).isEqualTo(4 * estimator.trainableParams("sana-1600m"));
        assertThat(z2.get("gradients")).isEqualTo(4 * estimator.trainableParams("sana-1600m") / 8);
        assertThat(z3.get("weights")).isEqualTo(4 * estimator.params("sana-1600m") / 8);
        assertThat(z3).containsKey("zero3_gather");
    }

    private Map<String, Long> zero(int stage) {
        RunSpec s = spec("sana-1600m", "a100-80gb", 8, 1, 1024, "bf16", "adamw", true, false, "precomputed", null);
        return estimator.estimate(s.overriddenBy(new RunSpec(null, null, null, null, null, null, null, null, null, null,
                null, null, null, stage, null, null, null))).breakdown();
    }

    @Test
    void checkpointingTradesMemoryForAThirdMoreCompute() {
        Estimate plain = estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 32, 256, "bf16", "adamw", false, false, "precomputed", "flash"));
        Estimate ckpt = estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 32, 256, "bf16", "adamw", true, false, "precomputed", "flash"));
        assertThat(ckpt.breakdown().get("activations")).isLessThan(plain.breakdown().get("activations") / 4);
        // GEMMs run forward twice (4/3); fused attention's backward is 2.5 forwards, so it grows by 4.5/3.5.
        assertThat(ckpt.stepBreakdown().get("compute") / plain.stepBreakdown().get("compute")).isCloseTo(4.0 / 3, within(0.05));
    }

    @Test
    void mathAttentionCostsQuadraticMemoryAndFp32CostsMoreThanAutocast() {
        Estimate flash = estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 8, 512, "bf16", "adamw", false, false, "precomputed", "flash"));
        Estimate math = estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 8, 512, "bf16", "adamw", false, false, "precomputed", "math"));
        Estimate fp32 = estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 8, 512, "fp32", "adamw", false, false, "precomputed", "flash"));
        assertThat(math.breakdown().get("activations")).isGreaterThan(flash.breakdown().get("activations"));
        assertThat(fp32.breakdown().get("activations")).isGreaterThan(flash.breakdown().get("activations"));
        assertThat(math.notes()).anyMatch(n -> n.contains("score matrix"));
        assertThat(math.suggestions()).anyMatch(x -> x.change().startsWith("use fused attention")
                && x.newPeakMemoryBytes() == flash.peakMemoryBytes());
        assertThat(flash.suggestions()).noneMatch(x -> x.change().startsWith("use fused attention"));
    }

    @Test
    void tf32MattersOnlyWhereTheGpuHasIt() {
        Estimate fp32 = estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 32, 256, "fp32", "adamw", false, false, "precomputed", "flash"));
        Estimate tf32 = estimator.estimate(spec("dit-xl-2", "a100-80gb", 1, 32, 256, "tf32", "adamw", false, false, "precomputed", "flash"));
        assertThat(tf32.stepSeconds()).isLessThan(fp32.stepSeconds() / 2);
        assertThat(fp32.suggestions()).anyMatch(s -> s.change().startsWith("enable TF32"));
        assertThatThrownBy(() -> estimator.estimate(spec("dit-xl-2", "v100-32gb", 1, 32, 256, "tf32", null, null, null, null, null)))
                .hasMessage("v100-32gb has no TF32; use fp32 or fp16");
    }

    @Test
    void videoModelsCountFrames() {
        RunSpec s16 = new RunSpec("opensora-1.2", "h100-sxm", 1, 1, 256, null, null, 16, null, null, null, null, null, null, null, null, null);
        RunSpec s64 = new RunSpec("opensora-1.2", "h100-sxm", 1, 1, 256, null, null, 64, null, null, null, null, null, null, null, null, null);
        Estimate a = estimator.estimate(s16);
        Estimate b = estimator.estimate(s64);
        assertThat(b.breakdown().get("activations")).isGreaterThan(3 * a.breakdown().get("activations"));
        assertThat(b.stepSeconds()).isGreaterThan(a.stepSeconds());
        assertThat(a.spec().frames()).isEqualTo(16);
    }

    @Test
    void suggestionsAreSingleChangesThatHelpWithNumbers() {
        Estimate e = estimator.estimate(spec("dit-xl-2", "a100-40gb", 1, 256, 256, "fp32", "adamw", false, true, "online", "math"));
        assertThat(e.fits()).isFalse();
        assertThat(e.suggestions()).isNotEmpty();
        assertThat(e.suggestions()).allSatisfy(s -> {
            assertThat(s.savesBytes() > 0 || s.newStepSeconds() < e.stepSeconds()).isTrue();
            assertThat(s.newPeakMemoryBytes()).isEqualTo(e.peakMemoryBytes() - s.savesBytes());
        });
        assertThat(e.suggestions()).anyMatch(s -> s.change().startsWith("enable gradient checkpointing"));
        assertThat(e.suggestions()).anyMatch(s -> s.change().startsWith("precompute VAE features"));
        assertThat(e.suggestions()).anyMatch(s -> s.change().startsWith("train in bf16"));
        assertThat(e.suggestions()).anyMatch(s -> s.change().startsWith("use 8-bit AdamW"));
        Suggestion accumulate = e.suggestions().stream().filter(s -> s.change().contains("gradient-accumulation"))
                .findFirst().orElseThrow();
        assertThat(accumulate.newPeakMemoryBytes()).isLessThanOrEqualTo(e.gpuMemoryBytes());
        // Sorted by bytes saved.
        for (int i = 1; i < e.suggestions().size(); i++) {
            assertThat(e.suggestions().get(i - 1).savesBytes()).isGreaterThanOrEqualTo(e.suggestions().get(i).savesBytes());
        }
    }

    @Test
    void totalTimeIsStepsTimesStep() {
        RunSpec s = new RunSpec("dit-xl-2", "h100-sxm", 8, 32, 256, null, null, null, "bf16", null, null, null, null,
                null, null, null, 400_000L);
        Estimate e = estimator.estimate(s);
        assertThat(e.totalSeconds()).isCloseTo(400_000 * e.stepSeconds(), within(1e-6));
        assertThat(estimator.estimate(simple("dit-xl-2", "h100-sxm", 8)).totalSeconds()).isNull();
    }

    @Test
    void calibrationScalesOnlyItsGpuAndFamily() {
        RunSpec pixart = spec("pixart-sigma-xl-2", "a800-80gb", 1, 2, 1024, null, null, null, null, null, null);
        RunSpec sana = spec("sana-600m", "a800-80gb", 1, 2, 1024, null, null, null, null, null, null);
        Estimate before = estimator.estimate(pixart);
        Calibration c = Calibration.NONE.with("a800-80gb", "pixart", new Calibration.Factors(1.5, 1.1));
        Estimator calibrated = estimator.withCalibration(c);
        Estimate after = calibrated.estimate(pixart);
        assertThat(after.stepSeconds()).isCloseTo(1.5 * before.stepSeconds(), within(1e-9));
        assertThat((double) after.peakMemoryBytes()).isCloseTo(1.1 * before.peakMemoryBytes(), within(2.0));
        assertThat(after.breakdown()).containsKey("calibration_adjustment");
        assertThat(after.notes()).anyMatch(n -> n.startsWith("calibrated from observed runs on a800-80gb/pixart"));
        assertThat(calibrated.estimate(sana)).isEqualTo(estimator.estimate(sana));
        // The original estimator is untouched.
        assertThat(estimator.estimate(pixart)).isEqualTo(before);
        assertThat(c.factorsFor("h100-sxm", "pixart")).isEqualTo(Calibration.Factors.IDENTITY);
        assertThatThrownBy(() -> new Calibration.Factors(0, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void serialisesToTheDesignJsonContract() throws Exception {
        Estimate e = estimator.estimate(spec("sana-1600m", "a40", 1, 1, 1024, null, null, null, null, null, null));
        JsonNode json = Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(e));
        for (String key : new String[] {"spec", "model", "gpu", "params", "trainable_params", "peak_memory_bytes",
                "gpu_memory_bytes", "fits", "max_batch", "step_seconds", "samples_per_second", "breakdown", "suggestions"}) {
            assertThat(json.has(key)).as(key).isTrue();
        }
        assertThat(json.get("spec").get("grad_checkpointing").asBoolean()).isTrue();
        assertThat(json.get("breakdown").has("optimizer")).isTrue();
        assertThat(json.get("suggestions").get(0).has("saves_bytes")).isTrue();
        assertThat(json.get("suggestions").get(0).has("new_peak_memory_bytes")).isTrue();
        assertThat(json.get("suggestions").get(0).has("new_step_seconds")).isTrue();
        assertThat(Json.MAPPER.treeToValue(json.get("spec"), RunSpec.class)).isEqualTo(e.spec());
    }

    private static RunSpec withBatch(int batch) {
        return new RunSpec(null, null, null, batch, null, null, null, null, null, null, null, null, null, null, null, null, null);
    }

    @Test
    void openSora12EncodesItsFramesFourImagesAtATime() {
        // Open-Sora 1.2's VAE pipeline passes micro_batch_size = 4 images to the 2-D VAE at a time, so its working
        // memory does not grow with the frames; Open-Sora 1.0 (micro_batch_size = 128) encodes a clip at once.
        Estimate clip51 = estimator.estimate(frames("opensora-1.2", 51));
        Estimate clip102 = estimator.estimate(frames("opensora-1.2", 102));
        assertThat(workingMemoryNote(clip51)).isEqualTo(workingMemoryNote(clip102));
        Estimate v10at16 = estimator.estimate(frames("opensora-1.0", 16));
        Estimate v10at32 = estimator.estimate(frames("opensora-1.0", 32));
        assertThat(workingMemoryNote(v10at32)).isNotEqualTo(workingMemoryNote(v10at16));
    }

    private static RunSpec frames(String model, int frames) {
        return new RunSpec(model, "h100-sxm", 1, 1, 512, null, null, frames, null, null, null, null, "online", null,
                null, null, null);
    }

    private static String workingMemoryNote(Estimate e) {
        String note = e.notes().stream().filter(n -> n.startsWith("the encoders' working memory")).findFirst()
                .orElseThrow();
        return note.substring(0, note.indexOf(" for this batch"));
    }
}
