package dev.trainwatch.collector.state;

import static dev.trainwatch.protocol.testing.Samples.attribution;
import static dev.trainwatch.protocol.testing.Samples.batch;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.ComparisonView;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Live MFU/HFU, energy, GPU-hours and cost through the fleet with the bundled estimator, against figures computed by
 * hand from what was published: DiT-XL/2 at 256 px is 118.6 GMACs per forward pass (DiT paper Table 4; MACs, DiT
 * issue #14), so a training sample is 3 × 2 × 118.6 = 711.6 GFLOPs of model work (4 × under full checkpointing);
 * the A100's dense peaks are 156 TFLOPS TF32, 312 FP16, 19.5 FP32 (NVIDIA's datasheet).
 */
class EfficiencyFiguresTest {

    private static final double MODEL_FLOPS = 3 * 2 * 118.6e9;

    private final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(Predictor.of(Estimator.bundled()), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());

    private static RunSpec dit(int gpus, int batch, String precision, boolean checkpointing, Long totalSteps) {
        return new RunSpec("dit-xl-2", "a100-80gb", gpus, batch, 256, null, null, null, precision, "adamw",
                checkpointing, true, "online", null, null, null, totalSteps);
    }

    /** A DiT log: a line every 100 steps at {@code stepsPerSecond}, GPUs busy and drawing {@code watts}. */
    private void train(String runId, int gpus, double stepsPerSecond, int lines, double watts) {
        List<String> uuids = new ArrayList<>();
        for (int i = 0; i < gpus; i++) {
            uuids.add("GPU-" + i);
        }
        long seq = 1;
        double energy = 0;
        long step = 0;
        double every = 100 / stepsPerSecond;
        double nextLine = clock.seconds() + every;
        for (int line = 0; line < lines; ) {
            clock.advanceSeconds(1);
            double t = clock.seconds();
            energy += watts;
            List<GpuSample> samples = new ArrayList<>();
            for (int i = 0; i < gpus; i++) {
                samples.add(new GpuSample(t, i, uuids.get(i), "NVIDIA A100-SXM4-80GB", null, 85_899_345_920L,
                        40_000_000_000L, null, null, 0.98, null, null, 1_410_000_000L, 1_410_000_000L, null, null,
                        List.of(), watts, 400.0, energy, 60.0, 0, List.of(), false, null));
            }
            fleet.ingestBatch(batch("node1", "agent-" + runId, seq++, samples, List.of(attribution(runId, uuids)),
                    List.of()));
            if (t >= nextLine) {
                step += 100;
                fleet.ingestSteps(runId, List.of(new StepEvent(step, 1 / stepsPerSecond, null, null, null, null, 100,
                        null, 0.15, null, null, null, null, null, t, null)));
                nextLine += every;
                line++;
            }
        }
    }

    /**
     * Issue 20: a DiT run watched with a spec that is not its own showed "MFU 172 %". Steps that fast are impossible
     * under the spec: said as a spec mismatch, with no MFU figure.
     */
    @Test
    void anImpossibleMfuIsASpecMismatchNotAFigure() {
        fleet.putSpec("wrong-spec", dit(1, 256, "bf16", false, null));
        // Batch 256 of DiT-XL/2 at 2 steps/s on one A100 would be 256 × 711.6 GFLOPs × 2 = 364 TFLOP/s: beyond its
        // 312 TFLOP/s bf16 peak.
        train("wrong-spec", 1, 2.0, 4, 300);
        RunView v = fleet.run("wrong-spec").orElseThrow();
        assertThat(v.observed().mfuRatio()).isNull();
        assertThat(v.observed().hfuRatio()).isNull();
        assertThat(v.observed().specMismatch()).contains("the spec does not match the run").contains("% of their peak");
    }

    @Test
    void fastDitTf32WithCheckpointingReproducesItsPublishedRateAsMfuAndHfu() {
        // fast-DiT README: one A100, batch 128, TF32, full checkpointing, VAE online: 0.43 steps/s.
        fleet.putSpec("fast-dit", dit(1, 128, "tf32", true, 400_000L));
        train("fast-dit", 1, 0.43, 6, 380);
        RunView v = fleet.run("fast-dit").orElseThrow();
        double mfu = MODEL_FLOPS * 128 * 0.43 / 156e12; // 0.251
        assertThat(v.observed().mfuRatio()).isCloseTo(mfu, within(0.05));
        assertThat(v.observed().hfuRatio()).isCloseTo(mfu * 4 / 3, within(0.05)); // 0.335
        assertThat(v.observed().hfuRatio()).isGreaterThan(v.observed().mfuRatio());
        assertThat(v.comparison().predictedMfuRatio()).isNotNull().isBetween(0.05, 0.6);
    }

    @Test
    void fastDitAmpReproducesItsPublishedRateAsMfu() {
        fleet.putSpec("fast-dit-amp", dit(1, 128, "fp16", true, null));
        train("fast-dit-amp", 1, 0.56, 6, 380);
        RunView v = fleet.run("fast-dit-amp").orElseThrow();
        assertThat(v.observed().mfuRatio()).isCloseTo(MODEL_FLOPS * 128 * 0.56 / 312e12, within(0.05)); // 0.163
    }

    @Test
    void dit8xA100ReproducesIssue22AsMfuWithoutCheckpointing() {
        // DiT issue #22: 8 x A100-80GB, 32 per GPU, no checkpointing; TF32 on 0.81 steps/s.
        fleet.putSpec("dit-8", dit(8, 32, "tf32", false, null));
        train("dit-8", 8, 0.81, 6, 390);
        RunView v = fleet.run("dit-8").orElseThrow();
        double mfu = MODEL_FLOPS * 256 * 0.81 / (8 * 156e12); // 0.118
        assertThat(v.observed().mfuRatio()).isCloseTo(mfu, within(0.05));
        assertThat(v.observed().hfuRatio()).isCloseTo(v.observed().mfuRatio(), within(1e-9)); // nothing recomputed
    }

    @Test
    void energyGpuHoursAndCostSoFarAndProjected() {
        fleet.gpuHourPrices(GpuHourPrices.parse("a100-80gb=2.0,*=1.0"));
        fleet.putSpec("costed", dit(8, 32, "tf32", false, 10_000L));
        double start = clock.seconds();
        train("costed", 8, 0.81, 6, 390);
        RunView v = fleet.run("costed").orElseThrow();
        // The first batch's samples arrive before the attribution that gives the GPUs to the run; the second sample
        // of each GPU starts its stretch.
        double held = clock.seconds() - start - 2;
        assertThat(v.observed().gpuHours()).isCloseTo(8 * held / 3600, within(1e-6));
        assertThat(v.observed().energyJoules()).isCloseTo(8 * 390 * held, within(1.0));
        assertThat(v.observed().cost()).isCloseTo(2.0 * 8 * held / 3600, within(1e-6));
        ComparisonView c = v.comparison();
        double remaining = (10_000 - 600) / 0.81;
        assertThat(c.etaSeconds()).isCloseTo(remaining, within(0.01 * remaining));
        assertThat(c.projectedGpuHours()).isCloseTo(v.observed().gpuHours() + 8 * c.etaSeconds() / 3600, within(1e-6));
        assertThat(c.projectedEnergyJoules()).isCloseTo(v.observed().energyJoules() + 8 * 390 * c.etaSeconds(),
                within(1.0));
        assertThat(c.projectedCost()).isCloseTo(2.0 * c.projectedGpuHours(), within(1e-6));
        assertThat(v.observed().goodputRatio()).isBetween(0.85, 1.0);
        double wall = v.observed().wallSeconds().values().stream().mapToDouble(Double::doubleValue).sum();
        assertThat(wall).isCloseTo(clock.seconds() - v.observed().accountedSinceTs(), within(0.5));
    }

    @Test
    void withoutAPriceThereIsNoCostAndWithoutASpecNoMfu() {
        train("unspecified", 2, 0.81, 3, 300);
        RunView v = fleet.run("unspecified").orElseThrow();
        assertThat(v.observed().cost()).isNull();
        assertThat(v.observed().mfuRatio()).isNull();
        assertThat(v.observed().energyJoules()).isPositive();
        assertThat(v.comparison().predictedMfuRatio()).isNull();
    }

    @Test
    void aRunWhoseLogIsNotReadHasNoGoodputRatherThanZero() {
        List<String> uuids = List.of("GPU-0");
        for (int i = 1; i <= 30; i++) {
            clock.advanceSeconds(1);
            fleet.ingestBatch(batch("node1", "agent-x", i, List.of(dev.trainwatch.protocol.testing.Samples.gpu(
                    clock.seconds(), 0, "GPU-0", 40_000_000_000L, 0.9)), List.of(attribution("no-log", uuids)),
                    List.of()));
        }
        RunView v = fleet.run("no-log").orElseThrow();
        assertThat(v.observed().goodputRatio()).isNull();
        assertThat(v.observed().wallSeconds()).containsOnlyKeys("startup");
        assertThat(v.observed().energyJoules()).isPositive();
    }
}
