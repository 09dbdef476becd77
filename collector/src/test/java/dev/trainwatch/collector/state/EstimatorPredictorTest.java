package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fleet over the real estimator: what the HTTP edge sees. */
class EstimatorPredictorTest {

    private final Predictor predictor = Predictor.of(Estimator.bundled());

    @Test
    void resolvesNvmlNamesAndLatentDownsampling() {
        assertThat(predictor.resolveGpuId("NVIDIA A100-SXM4-80GB")).contains("a100-80gb");
        assertThat(predictor.latentDownsample("pixart-sigma-xl-2")).hasValue(8);
        assertThat(predictor.latentDownsample("sana-1600m")).hasValue(32);
        assertThat(predictor.latentDownsample("no-such-model")).isEmpty();
    }

    @Test
    void specWithoutGpuTakesItFromTheAttributedGpus() {
        SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
        Fleet fleet = new Fleet(predictor, clock, FleetSettings.defaults(), DetectorSettings.defaults());
        double t = clock.seconds();
        GpuSample s = new GpuSample(t, 0, "GPU-a", "NVIDIA A800 80GB PCIe", null, 85_899_345_920L, 10L << 30, null,
                null, 0.9, null, null, null, null, null, null, List.of(), null, null, null, null, null, List.of(),
                false, null);
        fleet.ingestBatch(new AgentBatch("n1", "a1", 1, List.of(s),
                List.of(new RunAttribution("job", List.of(1L), List.of("GPU-a"), List.of(), null, false, null, null, null, null, null)), List.of(),
                null, null, null, null));
        RunSpec spec = new RunSpec("pixart-sigma-xl-2", null, 1, 20, 1024, null, null, null, "fp16", "came", true,
                false, "online", 0, null, null, 10_000L);
        RunView v = fleet.putSpec("job", spec);
        assertThat(v.estimate().gpu()).isEqualTo("a800-80gb");
        assertThat(v.comparison().predictedStepSeconds()).isPositive();
        assertThat(v.comparison().etaSeconds()).isPositive();
        assertThatThrownBy(() -> fleet.putSpec("job", new RunSpec("no-such-model", null, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null, null)))
                .isInstanceOf(InvalidSpecException.class);
    }
}
