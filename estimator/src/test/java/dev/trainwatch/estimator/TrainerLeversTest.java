package dev.trainwatch.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Quantised base weights, block swap, host memory and the sampling phase, as the estimate shows them. */
@Timeout(30)
class TrainerLeversTest {

    private final Estimator estimator = Estimator.bundled();

    /** kohya's Flux LoRA on a 24 GB card: rank 16 on the blocks' linears, 8-bit AdamW, cached latents and captions. */
    private static RunSpec fluxLora(String base, Integer swap) {
        return new RunSpec("flux.1-dev", "rtx4090", 1, 1, 1024, null, null, null, "bf16", "adamw8bit", true, false,
                "precomputed", null, "flash", null, null)
                .withPhysics(null, null, 16, List.of("attention", "mlp", "modulation"), null, null).withTrainer(base, swap);
    }

    @Test
    void quantisedBaseWeightsShrinkTheWeightsAndCostDequantisation() {
        Estimate bf16 = estimator.estimate(fluxLora(null, null));
        Estimate fp8 = estimator.estimate(fluxLora("fp8", null));
        Estimate nf4 = estimator.estimate(fluxLora("nf4", null));
        // 11.9B frozen parameters: about 24 GB in bf16, 12 in fp8, a little over 6 in NF4.
        assertThat(bf16.breakdown().get("weights")).isBetween(23_500_000_000L, 24_500_000_000L);
        assertThat(fp8.breakdown().get("weights")).isBetween(11_800_000_000L, 12_600_000_000L);
        assertThat(nf4.breakdown().get("weights")).isBetween(6_000_000_000L, 6_800_000_000L);
        assertThat(fp8.stepBreakdown()).containsKey("dequantize");
        assertThat(bf16.stepBreakdown()).doesNotContainKey("dequantize");
        assertThat(fp8.stepSeconds()).isGreaterThan(bf16.stepSeconds());
        assertThat(fp8.spec().baseWeights()).isEqualTo("fp8");
        // Trainers' own spellings map to the six names.
        assertThat(estimator.estimate(fluxLora("float8_e4m3fn", null)).spec().baseWeights()).isEqualTo("fp8");
        assertThat(estimator.estimate(fluxLora("int8-quanto", null)).spec().baseWeights()).isEqualTo("int8");
        assertThat(estimator.estimate(fluxLora("nf4-bnb", null)).spec().baseWeights()).isEqualTo("nf4");
    }

    @Test
    void blockSwapTradesDeviceMemoryForPinnedHostMemoryAndPcieTime() {
        Estimate none = estimator.estimate(fluxLora("fp8", 0));
        Estimate swap = estimator.estimate(fluxLora("fp8", 18));
        long saved = none.peakMemoryBytes() - swap.peakMemoryBytes();
        // kohya's 18 = 9 double-stream + 18 single-stream blocks: about 5.6B parameters, 5.6 GB in fp8.
        assertThat(saved).isBetween(5_000_000_000L, 6_500_000_000L);
        assertThat(swap.hostBreakdown().get("pinned_swap_blocks")).isBetween(5_000_000_000L, 6_500_000_000L);
        assertThat(none.hostBreakdown()).doesNotContainKey("pinned_swap_blocks");
        assertThat(swap.spec().blocksToSwap()).isEqualTo(18);
        // In bf16 on a PCIe 3 card with little compute per block, the copies outlast the compute they overlap.
        RunSpec small = new RunSpec("flux.1-dev", "v100-32gb", 1, 1, 256, null, null, null, "fp16", "adamw8bit", true,
                false, "precomputed", null, "flash", null, null)
                .withPhysics(null, null, 16, null, null, null).withTrainer(null, 30);
        Estimate pcieBound = estimator.estimate(small);
        assertThat(pcieBound.stepBreakdown().get("block_swap")).isPositive();
        assertThat(pcieBound.notes()).anySatisfy(n -> assertThat(n).startsWith("30 swapped blocks cross PCIe twice a step")
                .contains("PCIe-bound"));
        assertThat(swap.notes()).anySatisfy(n -> assertThat(n).contains("hidden under the blocks' compute"));
    }

    @Test
    void outOfRangeValuesAreRefusedInOneLine() {
        assertThatThrownBy(() -> estimator.estimate(fluxLora("fp4", null)))
                .hasMessage("unknown base_weights 'fp4'; choose one of bf16, fp16, fp8, int8, int4, nf4");
        assertThatThrownBy(() -> estimator.estimate(fluxLora("fp8", 36)))
                .hasMessage("blocks_to_swap must be between 0 and 35 for flux.1-dev, got 36");
        assertThatThrownBy(() -> estimator.estimate(Specs.simple("wan2.1-t2v-14b", "h100-sxm", 1).withTrainer(null, 40)))
                .hasMessage("blocks_to_swap must be between 0 and 39 for wan2.1-t2v-14b, got 40");
        assertThatThrownBy(() -> estimator.estimate(Specs.simple("flux.1-dev", "h100-sxm", 1).withTrainer("fp8", null)))
                .hasMessageStartingWith("base_weights sets how frozen weights are stored, and this run trains every weight");
    }

    @Test
    void theEstimateShowsHostMemoryAndTheSamplingPhase() {
        Estimate e = estimator.estimate(fluxLora("fp8", 18));
        assertThat(e.hostMemoryBytes()).isEqualTo(e.hostBreakdown().values().stream().mapToLong(Long::longValue).sum());
        // Loading the 16-bit checkpoint, its fp8 copy and T5 + CLIP: SimpleTuner's "about 50GB of system memory".
        assertThat(e.hostMemoryBytes()).isBetween(40_000_000_000L, 60_000_000_000L);
        assertThat(e.samplingPeakMemoryBytes())
                .isEqualTo(e.samplingBreakdown().values().stream().mapToLong(Long::longValue).sum());
        assertThat(e.samplingBreakdown()).containsKeys("weights", "vae_decode", "sampling_activations")
                .doesNotContainKeys("gradients", "activations");
    }

    @Test
    void theSamplingNoteAppearsExactlyWhenTrainingFitsAndSamplingDoesNot() {
        // Wan 14B, fp8 base, 81 frames at 720 px on a 24 GB card with more and more blocks swapped: wherever training
        // fits but the sample (its forward at CFG batch 2, the VAE decode) does not, the estimate says so.
        for (int swap : new int[] {0, 10, 20, 30}) {
            RunSpec spec = new RunSpec("wan2.1-t2v-14b", "rtx4090", 1, 1, 720, null, null, 81, "bf16", "adamw8bit", true,
                    false, "precomputed", null, "flash", null, null)
                    .withPhysics(null, null, 32, List.of("attention", "mlp"), null, null).withTrainer("fp8", swap);
            Estimate e = estimator.estimate(spec);
            boolean noted = e.notes().stream().anyMatch(n -> n.startsWith("training fits, but sampling needs"));
            assertThat(noted).as("swap " + swap).isEqualTo(e.fits() && e.samplingPeakMemoryBytes() > e.gpuMemoryBytes());
        }
    }

    @Test
    void theLeversAreSuggestedWithWhatTheySave() {
        Estimate bf16 = estimator.estimate(fluxLora(null, null));
        assertThat(bf16.fits()).isFalse();
        assertThat(bf16.suggestions()).anySatisfy(s -> assertThat(s.change()).startsWith("store the frozen base weights in fp8"));
        assertThat(bf16.suggestions()).anySatisfy(s -> assertThat(s.change()).startsWith("swap ").contains("--blocks-to-swap"));
    }

}
