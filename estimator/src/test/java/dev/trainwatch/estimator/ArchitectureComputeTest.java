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
    void eachArchitectureReachesItsOwnShareOfItsPeak() {
        // DiT-XL/2 keeps attention in the training dtype: the whole forward is priced at one rate.
        double flops = 2 * macs("dit-xl-2", 256) * 64 * 3;
        assertThat(run("dit-xl-2", "a100-80gb", 64, 256, "bf16").stepBreakdown().get("compute"))
                .isCloseTo(flops / (312e12 * 0.45), within(1e-9));
        assertThat(run("dit-xl-2", "h100-sxm", 64, 256, "bf16").stepBreakdown().get("compute"))
                .isCloseTo(flops / (989e12 * 0.18), within(1e-9));
        assertThat(run("dit-xl-2", "v100-32gb", 64, 256, "fp16").stepBreakdown().get("compute"))
                .isCloseTo(flops / (125e12 * 0.5), within(1e-9));
        // The same run is about 1.3x faster on an H100 than on an A100, not the 3.2x of their peaks.
        double speedup = run("dit-xl-2", "a100-80gb", 64, 256, "bf16").stepSeconds()
                / run("dit-xl-2", "h100-sxm", 64, 256, "bf16").stepSeconds();
        assertThat(speedup).isBetween(1.2, 2.0);
        // A card's own efficiency in a catalog overrides its architecture's: none of the bundled cards has one.
        assertThat(estimator.gpus()).allSatisfy(g -> assertThat(g.efficiency()).isZero());
    }

    @Test
    void pixartsFp32AttentionRunsWithoutTensorCoresOnAV100() {
        // PixArt keeps fp32_attention=True: q, k, v are upcast and xformers runs fp32 kernels, SIMT on Volta (no
        // fp32/TF32 tensor cores) and 3xTF32 from Ampere on. At 1024 px attention is a large share of the work.
        Estimate v100 = run("pixart-alpha-xl-2", "v100-32gb", 1, 1024, "fp16");
        Estimate a100 = run("pixart-alpha-xl-2", "a100-80gb", 1, 1024, "fp16");
        double flops = 2 * macs("pixart-alpha-xl-2", 1024) * 3;
        double v100AllHalf = flops / (125e12 * 0.5);
        double a100AllHalf = flops / (312e12 * 0.45);
        double v100Extra = v100.stepBreakdown().get("compute") / v100AllHalf;
        double a100Extra = a100.stepBreakdown().get("compute") / a100AllHalf;
        assertThat(v100Extra).isGreaterThan(2.0);
        // 3xTF32 runs at a third of the TF32 rate: relative to its fp16 rate an A100 pays as much for the upcast.
        assertThat(a100Extra).isGreaterThan(2.0);
        assertThat(v100.stepBreakdown().get("compute")).isGreaterThan(1.5 * a100.stepBreakdown().get("compute"));
        // A model that does not upcast prices its attention in fp16 on the same card.
        double dit = run("dit-xl-2", "v100-32gb", 1, 512, "fp16").stepBreakdown().get("compute")
                / (2 * macs("dit-xl-2", 512) * 3 / (125e12 * 0.5));
        assertThat(dit).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void blackwellCardsArePricedWithHoppersSharesUntilMeasurementsSayOtherwise() {
        double h100 = run("sana-1600m", "h100-sxm", 8, 1024, "bf16").stepBreakdown().get("compute");
        double b200 = run("sana-1600m", "b200", 8, 1024, "bf16").stepBreakdown().get("compute");
        assertThat(h100 / b200).isCloseTo(2250.0 / 989.0, within(0.01));
    }
}
