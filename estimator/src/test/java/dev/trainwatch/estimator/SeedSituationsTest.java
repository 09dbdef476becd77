package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Specs.spec;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The situations users brought to the projects' issue trackers come out right and explained. */
class SeedSituationsTest {

    private final Estimator estimator = Estimator.bundled();

    @Test
    void sana1600mWithCameOnAnA40IsAtTheLimitAndAdamwCostsLess() {
        Estimate came = estimator.estimate(spec("sana-1600m", "a40", 1, 1, 1024, "fp16", "came", true, null,
                "online", null));
        Estimate adamw = estimator.estimate(spec("sana-1600m", "a40", 1, 1, 1024, "fp16", "adamw", true, null,
                "online", null));
        assertThat(came.peakMemoryBytes()).isGreaterThanOrEqualTo((long) (0.95 * came.gpuMemoryBytes()));
        assertThat(adamw.peakMemoryBytes()).isLessThan(came.peakMemoryBytes());
        assertThat(adamw.breakdown().get("optimizer")).isLessThan(came.breakdown().get("optimizer"));
        assertThat(came.breakdown()).containsKeys("frozen_encoders", "encoder_transients", "cuda_context",
                "allocator_overhead");
        // The reason is spelled out: CAME's factors on Sana's 4-D 1x1 conv weights.
        assertThat(came.notes()).anyMatch(n -> n.contains("CAME") && n.contains("[O, I, 1, 1]") && n.contains("AdamW"));
        assertThat(came.suggestions()).anyMatch(s -> s.change().contains("AdamW instead of CAME") && s.savesBytes() > 4e9);
    }

    @Test
    void pixartSigmaBatch20OnAnA800ShowsTheEncoderShareAndPricesPrecomputing() {
        Estimate e = estimator.estimate(spec("pixart-sigma-xl-2", "a800-80gb", 1, 20, 1024, "fp16", null, null, null,
                "online", null));
        // The user ran it: it fits, at the limit.
        assertThat(e.fits()).isTrue();
        assertThat(e.peakMemoryBytes()).isGreaterThan((long) (0.85 * e.gpuMemoryBytes()));
        double encoders = e.stepBreakdown().get("text_encoder") + e.stepBreakdown().get("vae_encoder");
        // A small share: the fp32 attention (xformers, 3xTF32) dominates this step, not the encoders.
        assertThat(encoders).isGreaterThan(0.03 * e.stepSeconds());
        assertThat(e.notes()).anyMatch(n -> n.startsWith("online encoders take") && n.contains("%"));
        Suggestion precompute = e.suggestions().stream().filter(s -> s.change().startsWith("precompute T5 and VAE"))
                .findFirst().orElseThrow();
        assertThat(precompute.savesBytes()).isGreaterThan(9_000_000_000L);
        assertThat(precompute.newStepSeconds()).isLessThan(e.stepSeconds());
        assertThat(precompute.change()).containsPattern("saves \\d+\\.\\d GiB, \\d+% less step time");
    }
}
