package dev.trainwatch.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The regimes big runs use: master weights under ZeRO, pure half, partial checkpointing, split features, buckets. */
class TrainingRegimesTest {

    private final Estimator estimator = Estimator.bundled();

    private static RunSpec base(String model, String gpu, int gpus, int batch, String precision, Integer zero) {
        return new RunSpec(model, gpu, gpus, batch, null, null, null, null, precision, "adamw", true, false,
                "precomputed", zero, null, null, null);
    }

    private static RunSpec regime(RunSpec s, String weights, List<Integer> ckpt) {
        return s.withRegime(null, null, weights, ckpt, null, null);
    }

    @Test
    void mixedPrecisionWithMasterWeightsShardsSixteenBytesAsZeroStagesSay() {
        RunSpec s = base("opensora-1.2", "h100-sxm", 8, 1, "bf16", 0);
        long p = estimator.trainableParams("opensora-1.2");
        Estimate zero0 = estimator.estimate(regime(s, "mixed", null));
        // 2 B half params + 2 B half grads + 4 B master + 8 B AdamW = 16 B per parameter, nothing sharded.
        long states = zero0.breakdown().get("weights") + zero0.breakdown().get("gradients")
                + zero0.breakdown().get("master_weights") + zero0.breakdown().get("optimizer");
        assertThat((double) states / p).isCloseTo(16.0, within(0.01));
        assertThat(zero0.breakdown()).doesNotContainKey("autocast_cache");
        Estimate zero2 = estimator.estimate(regime(new RunSpec("opensora-1.2", "h100-sxm", 8, 1, null, null, null,
                null, "bf16", "adamw", true, false, "precomputed", 2, null, null, null), "mixed", null));
        long states2 = zero2.breakdown().get("weights") + zero2.breakdown().get("gradients")
                + zero2.breakdown().get("master_weights") + zero2.breakdown().get("optimizer");
        // ZeRO-2 over 8: 2 + 14/8 = 3.75 B per parameter.
        assertThat((double) states2 / p).isCloseTo(3.75, within(0.01));
        assertThat(zero2.notes()).anyMatch(n -> n.contains("fp32 master copy") && n.contains("ZeRO 2"));
        Estimate zero3 = estimator.estimate(regime(new RunSpec("opensora-1.2", "h100-sxm", 8, 1, null, null, null,
                null, "bf16", "adamw", true, false, "precomputed", 3, null, null, null), "mixed", null));
        long states3 = zero3.breakdown().get("weights") + zero3.breakdown().get("gradients")
                + zero3.breakdown().get("master_weights") + zero3.breakdown().get("optimizer");
        assertThat((double) states3 / p).isCloseTo(2.0, within(0.01));
    }

    @Test
    void pureHalfHalvesEveryState() {
        RunSpec s = base("sana-1600m", "a100-80gb", 1, 1, "bf16", null);
        Estimate amp = estimator.estimate(s);
        Estimate pure = estimator.estimate(regime(s, "pure", null));
        assertThat(pure.breakdown().get("weights")).isEqualTo(amp.breakdown().get("weights") / 2);
        assertThat(pure.breakdown().get("gradients")).isEqualTo(amp.breakdown().get("gradients") / 2);
        assertThat(pure.breakdown().get("optimizer")).isEqualTo(amp.breakdown().get("optimizer") / 2);
        assertThat(pure.spec().weights()).isEqualTo("pure");
        assertThat(amp.spec().weights()).isEqualTo("fp32");
    }

    @Test
    void halfParametersNeedAHalfPrecision() {
        assertThatThrownBy(() -> estimator.estimate(regime(base("dit-xl-2", "a100-80gb", 1, 8, "fp32", null), "mixed", null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("needs precision fp16 or bf16");
        assertThatThrownBy(() -> estimator.estimate(regime(base("dit-xl-2", "a100-80gb", 1, 8, "bf16", null), "fp8", null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("unknown weights 'fp8'");
    }

    @Test
    void partialCheckpointingLiesBetweenNoneAndFull() {
        RunSpec none = new RunSpec("opensora-2.0", "h100-sxm", 8, 1, 256, null, null, 33, "bf16", "adamw", false,
                false, "precomputed", 2, null, null, null);
        RunSpec full = new RunSpec("opensora-2.0", "h100-sxm", 8, 1, 256, null, null, 33, "bf16", "adamw", true,
                false, "precomputed", 2, null, null, null);
        Estimate off = estimator.estimate(none);
        Estimate all = estimator.estimate(full);
        // Open-Sora 2.0's grad_ckpt_settings=(8, 100): the first 8 of 19 double-stream blocks, all 38 single-stream.
        Estimate part = estimator.estimate(full.withRegime(null, null, null, List.of(8, 100), null, null));
        assertThat(part.breakdown().get("activations")).isBetween(all.breakdown().get("activations"),
                off.breakdown().get("activations"));
        assertThat(part.stepSeconds()).isBetween(off.stepSeconds(), all.stepSeconds());
        assertThat(part.spec().checkpointBlocks()).containsExactly(8, 38);
        assertThat(part.notes()).anyMatch(n -> n.contains("recomputes 8 of 19 and 38 of 38 blocks (double-stream, single-stream)"));
        assertThat(part.suggestions()).anyMatch(x -> x.change().startsWith("checkpoint every block"));
        // All blocks named one by one is full checkpointing: no partial note, same numbers.
        Estimate named = estimator.estimate(full.withRegime(null, null, null, List.of(19, 38), null, null));
        assertThat(named.peakMemoryBytes()).isEqualTo(all.peakMemoryBytes());
        assertThat(named.spec().checkpointBlocks()).isNull();
        // One number counts in forward order.
        Estimate first = estimator.estimate(full.withRegime(null, null, null, List.of(19), null, null));
        assertThat(first.spec().checkpointBlocks()).containsExactly(19, 0);
        assertThatThrownBy(() -> estimator.estimate(full.withRegime(null, null, null, List.of(1, 2, 3), null, null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("2 block groups");
    }

    @Test
    void textPrecomputedAndVaeOnlineCountsOnlyTheVae() {
        RunSpec s = new RunSpec("pixart-alpha-xl-2", "a100-80gb", 1, 32, 256, null, null, null, "fp16", "adamw", true,
                true, null, null, null, null, null);
        Estimate online = estimator.estimate(s.withRegime("online", "online", null, null, null, null));
        Estimate vaeOnly = estimator.estimate(s.withRegime("precomputed", "online", null, null, null, null));
        Estimate neither = estimator.estimate(s.withRegime("precomputed", "precomputed", null, null, null, null));
        assertThat(vaeOnly.stepBreakdown()).containsKey("vae_encoder").doesNotContainKey("text_encoder");
        assertThat(vaeOnly.breakdown().get("frozen_encoders")).isLessThan(1L << 30); // the SD VAE only, not T5-XXL
        assertThat(vaeOnly.peakMemoryBytes()).isBetween(neither.peakMemoryBytes(), online.peakMemoryBytes());
        assertThat(vaeOnly.spec().features()).isEqualTo("online");
        assertThat(vaeOnly.spec().textFeatures()).isEqualTo("precomputed");
        assertThat(vaeOnly.spec().vaeFeatures()).isEqualTo("online");
        assertThat(vaeOnly.suggestions()).anyMatch(x -> x.change().startsWith("precompute VAE features"));
        assertThat(neither.spec().textFeatures()).isNull();
    }

    @Test
    void videoVaeMicroBatchBoundsTheEncoderWorkingMemory() {
        RunSpec s = new RunSpec("opensora-1.2", "h100-sxm", 8, 4, 512, null, null, 51, "bf16", "adamw", true, true,
                "online", 2, null, null, null);
        Estimate four = estimator.estimate(s.withRegime(null, null, "mixed", null, 4, null));
        Estimate all = estimator.estimate(s.withRegime(null, null, "mixed", null, 204, null));
        assertThat(four.spec().vaeMicroBatch()).isEqualTo(4);
        assertThat(all.peakMemoryBytes()).isGreaterThan(four.peakMemoryBytes());
    }

    @Test
    void bucketsArePricedEachAndTheLargestSetsMemory() throws Exception {
        List<RunSpec.Bucket> buckets = List.of(new RunSpec.Bucket(256, 256, 1, 45, 1.0),
                new RunSpec.Bucket(256, 256, 129, 3, 1.0), new RunSpec.Bucket(1024, 1024, 1, 7, 0.5));
        RunSpec s = new RunSpec("opensora-2.0", "h100-sxm", 8, null, null, null, null, null, "bf16", "adamw", true,
                false, "online", 2, null, null, null).withRegime(null, null, "mixed", List.of(8, 100), null, buckets);
        Estimate e = estimator.estimate(s);
        double worst = 0;
        double mean = 0;
        for (RunSpec.Bucket b : buckets) {
            Estimate one = estimator.estimate(s.withRegime(null, null, "mixed", List.of(8, 100), null, null)
                    .withShape(b.batch(), null, b.height(), b.width(), b.frames()));
            worst = Math.max(worst, one.peakMemoryBytes());
            mean += one.stepSeconds() * b.weight() / 2.5;
        }
        assertThat((double) e.peakMemoryBytes()).isEqualTo(worst);
        assertThat(e.stepSeconds()).isCloseTo(mean, within(1e-9));
        assertThat(e.notes().get(0)).startsWith("3 buckets priced; largest memory first:");
        assertThat(e.spec().buckets()).hasSize(3);
        // The wire form round-trips.
        String json = Json.newMapper().writeValueAsString(s);
        assertThat(json).contains("\"checkpoint_blocks\":[8,100]").contains("\"buckets\":[{\"height\":256");
        assertThat(Json.newMapper().readValue(json, RunSpec.class)).isEqualTo(s);
        assertThatThrownBy(() -> estimator.estimate(s.withRegime(null, null, null, null, null,
                List.of(new RunSpec.Bucket(256, 256, 1, 1, -1.0))))).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("bucket weight must be above 0");
    }
}
