package dev.trainwatch.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.RunSpec;
import org.junit.jupiter.api.Test;

/** Compute priced per GPU architecture and dtype, and attention in the dtype it really runs in. */
class ArchitectureComputeTest {

    private final Estimator estimator = Estimator.bundled();

    private Estimate run(String model, String gpu, int batch, int resolution, String precision) {
        return estimator.estimate(new RunSpec(model, gpu, 1, batch, resolution, null, null, null, precision, "adamw",
                false, false, "precomputed", 0, "flash", null, null));
    }

    private double macs(String model, int resolution) {
        return estimator.forwardMacs(model, resolution, resolution, 1);
    }

    @Test
    void anH100IsFasterThanAnA100ByWhatTheStepIsMadeOfNotByItsPeak() {
        // DiT-XL/2, 256 px, bf16, batch 64, checkpointing, precomputed latents (the A100-vs-H100 question).
        double a100 = run("dit-xl-2", "a100-80gb", 64, 256, "bf16").stepSeconds();
        double h100 = run("dit-xl-2", "h100-sxm", 64, 256, "bf16").stepSeconds();
        // Eager PyTorch under autocast (DiT's, fast-DiT's, accelerate's regime) reaches about two thirds of the priced
        // rate on Hopper (the one published A100/H100 pair of such a stack): the H100 is faster, by less than its peak.
        assertThat(a100 / h100).isBetween(1.1, 2.0);
        // Compiled (fused element-wise work, the datasheet rates) the H100 is more than twice as fast.
        RunSpec compiled = new RunSpec("dit-xl-2", "h100-sxm", 1, 64, 256, null, null, null, "bf16", "adamw",
                false, false, "precomputed", 0, "flash", null, null).withPhysics("compiled", null, null, null, null, null);
        assertThat(estimator.estimate(compiled).stepSeconds()).isLessThan(h100 / 2);
        RunSpec compiledA100 = new RunSpec("dit-xl-2", "a100-80gb", 1, 64, 256, null, null, null, "bf16", "adamw",
                false, false, "precomputed", 0, "flash", null, null).withPhysics("compiled", null, null, null, null, null);
        // Its GEMMs gain 3.2x (dense peaks), its element-wise kernels 1.6x (HBM bandwidth): the step less than 3.2x.
        double speedup = estimator.estimate(compiledA100).stepSeconds() / estimator.estimate(compiled).stepSeconds();
        assertThat(speedup).isBetween(1.6, 3.2);
        // None of the bundled cards overrides the shared GEMM share.
        assertThat(estimator.catalog().gpus()).allSatisfy(g -> assertThat(g.efficiency()).isZero());
    }

    @Test
    void theColossalAiShareOfHopperAppliesToHalfParametersWithMasterWeightsOnlyAndNeverToCompiledRuns() {
        // The published eager Hopper steps all ran on ColossalAI's booster (half parameters, fp32 master weights): the
        // share fitted on them prices that regime; an autocast run on the same card is priced at the autocast share.
        RunSpec autocast = new RunSpec("dit-xl-2", "h800-sxm", 8, 128, 256, null, null, null, "bf16", "adamw", false,
                true, "online", 2, "flash", null, null);
        RunSpec colossal = autocast.withRegime(null, null, "mixed", null, null, null);
        Estimate a = estimator.estimate(autocast);
        Estimate c = estimator.estimate(colossal);
        double gpuWorkA = a.stepSeconds() - a.stepOperations().get("optimizer") - a.stepOperations().get("ema")
                - a.stepOperations().get("allreduce");
        double gpuWorkC = c.stepSeconds() - c.stepOperations().get("optimizer") - c.stepOperations().get("ema")
                - c.stepOperations().get("allreduce");
        // Same operations (mixed weights change the element-wise traffic a little): the ratio is about 0.67 / 0.42.
        assertThat(gpuWorkC / gpuWorkA).isBetween(1.3, 1.8);
        assertThat(c.notes()).anyMatch(n -> n.contains("ColossalAI") && n.contains("42%"));
        assertThat(a.notes()).anyMatch(n -> n.contains("67%"));
        // On Ampere neither share applies, and compiled runs get the datasheet rates on every architecture.
        Estimate ampere = estimator.estimate(colossal.onHardware("a100-80gb", null, null));
        assertThat(ampere.notes()).noneMatch(n -> n.contains("of its datasheet rates"));
        Estimate compiled = estimator.estimate(colossal.withPhysics("compiled", null, null, null, null, null));
        assertThat(compiled.notes()).noneMatch(n -> n.contains("of its datasheet rates"));
        assertThat(compiled.stepSeconds()).isLessThan(c.stepSeconds() / 2);
    }

    @Test
    void halfPrecisionGainsLessThanTheGemmPeakBecauseMuchOfTheStepIsMemoryBound() {
        // fast-DiT on one A100, batch 128, checkpointing, VAE online: TF32 2.33 s, AMP 1.79 s per step (1.30x).
        RunSpec tf32 = new RunSpec("dit-xl-2", "a100-80gb", 1, 128, 256, null, null, null, "tf32", "adamw", true, true,
                "online", 0, null, null, null);
        RunSpec amp = new RunSpec("dit-xl-2", "a100-80gb", 1, 128, 256, null, null, null, "fp16", "adamw", true, true,
                "online", 0, null, null, null);
        double ratio = estimator.estimate(tf32).stepSeconds() / estimator.estimate(amp).stepSeconds();
        assertThat(ratio).isBetween(1.30 * 0.8, 1.30 * 1.25);
    }

    @Test
    void pixartsFp32AttentionRunsWithoutTensorCoresOnAV100AndConfigsCanTurnItOff() {
        // PixArt keeps fp32_attention=True: xformers runs fp32 kernels, SIMT on Volta and 3xTF32 from Ampere on.
        RunSpec upcast = new RunSpec("pixart-alpha-xl-2", "v100-32gb", 1, 1, 1024, null, null, null, "fp16", "adamw",
                false, false, "precomputed", 0, "flash", null, null);
        Estimate v100 = estimator.estimate(upcast);
        Estimate half = estimator.estimate(upcast.withPhysics(null, "half", null, null, null, null));
        assertThat(v100.stepSeconds()).isGreaterThan(1.5 * half.stepSeconds());
        assertThat(half.spec().attentionPrecision()).isEqualTo("half");
        assertThat(v100.spec().attentionPrecision()).isEqualTo("fp32");
    }

    @Test
    void aBlackwellCardIsFasterThanAnH100ButNotByItsWholePeak() {
        double h100 = run("sana-1600m", "h100-sxm", 8, 1024, "bf16").stepSeconds();
        double b200 = run("sana-1600m", "b200", 8, 1024, "bf16").stepSeconds();
        // Between the ratio of their dense peaks (2.3x) and of their HBM bandwidths (2.4x), not beyond.
        assertThat(h100 / b200).isBetween(1.3, 8000.0 / 3350.0);
    }
}
