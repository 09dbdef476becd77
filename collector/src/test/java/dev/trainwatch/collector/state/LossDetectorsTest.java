package dev.trainwatch.collector.state;

import dev.trainwatch.protocol.testing.RequiredFixtures;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.detect.Severity;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * loss_nonfinite and loss_spike through the fleet: a diverged run is called within one report, and healthy, noisy,
 * plateaued, multi-bucket and restarted runs (and a real DiT log) stay quiet.
 */
class LossDetectorsTest {

    private final SettableClock clock = new SettableClock(Instant.parse("2026-05-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(new FakePredictor(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());
    private long step;

    private void report(String run, Double loss, Double grad) {
        report(run, loss, grad, null);
    }

    private void report(String run, Double loss, Double grad, Integer bucket) {
        clock.advanceSeconds(20);
        step += 20;
        fleet.ingestSteps(run, List.of(new StepEvent(step, 1.0, null, null, null, null, 20, null, loss, 1e-4, grad,
                bucket, bucket, null, clock.seconds(), null)));
        fleet.tick();
    }

    private Optional<Anomaly> active(String run, AnomalyKind kind) {
        return fleet.run(run).orElseThrow().anomalies().stream().filter(a -> a.kind() == kind && a.active())
                .findFirst();
    }

    private boolean ever(String run, AnomalyKind kind) {
        return fleet.run(run).orElseThrow().anomalies().stream().anyMatch(a -> a.kind() == kind);
    }

    private void spec(String run, String precision) {
        fleet.putSpec(run, new RunSpec("pixart-sigma-xl-2", "a100-80gb", 1, 8, 512, null, null, null, precision,
                "adamw", true, false, "precomputed", null, null, null, null));
    }

    @Test
    void aNanLossIsCriticalAtTheFirstReportAndNamesTheStep() {
        spec("div", "bf16");
        for (int i = 0; i < 30; i++) {
            report("div", 0.2 - i * 0.001, 1.2);
        }
        assertThat(active("div", AnomalyKind.LOSS_NONFINITE)).isEmpty();
        long lastGood = step;
        report("div", Double.NaN, Double.NaN);
        Anomaly a = active("div", AnomalyKind.LOSS_NONFINITE).orElseThrow();
        assertThat(a.severity()).isEqualTo(Severity.CRITICAL);
        assertThat(a.message()).contains("loss is nan since step " + step).contains("step " + lastGood);
        assertThat(a.evidence()).containsEntry("first_step", step).containsEntry("what", "loss");
        assertThat(fleet.run("div").orElseThrow().observed().lossNonfinite()).isTrue();
        // Still NaN: held. Two finite reports are not a recovery, three are.
        report("div", Double.NaN, null);
        report("div", 0.19, 1.0);
        report("div", 0.19, 1.0);
        assertThat(active("div", AnomalyKind.LOSS_NONFINITE)).isPresent();
        report("div", 0.19, 1.0);
        assertThat(active("div", AnomalyKind.LOSS_NONFINITE)).isEmpty();
        assertThat(fleet.run("div").orElseThrow().observed().lossNonfiniteReports()).isEqualTo(2);
    }

    @Test
    void fp16GradScalerOverflowsAreQuietUntilTheyPersist() {
        spec("amp", "fp16");
        for (int i = 0; i < 30; i++) {
            // GradScaler meets an infinite gradient now and then: one report in ten.
            report("amp", 0.15, i % 10 == 3 ? Double.POSITIVE_INFINITY : 0.9);
        }
        report("amp", 0.15, Double.POSITIVE_INFINITY);
        report("amp", 0.15, Double.POSITIVE_INFINITY);
        assertThat(ever("amp", AnomalyKind.LOSS_NONFINITE)).isFalse();
        report("amp", 0.15, Double.POSITIVE_INFINITY);
        Anomaly a = active("amp", AnomalyKind.LOSS_NONFINITE).orElseThrow();
        assertThat(a.message()).contains("gradient norm has been inf for 3 reports").contains("loss scaler");

        spec("bf", "bf16");
        report("bf", 0.15, Double.POSITIVE_INFINITY);
        assertThat(ever("bf", AnomalyKind.LOSS_NONFINITE)).isFalse();
        report("bf", 0.15, Double.POSITIVE_INFINITY);
        assertThat(active("bf", AnomalyKind.LOSS_NONFINITE)).isPresent();
    }

    @Test
    void reportsWithoutALossNeitherResolveNorHideADivergence() {
        spec("mixed", "bf16");
        for (int i = 0; i < 10; i++) {
            report("mixed", 0.2, 1.0);
        }
        report("mixed", Double.NaN, Double.NaN);
        for (int i = 0; i < 4; i++) {
            report("mixed", null, null); // timer lines that carry no loss
        }
        assertThat(active("mixed", AnomalyKind.LOSS_NONFINITE)).as("held through lines without a loss").isPresent();
        assertThat(fleet.run("mixed").orElseThrow().anomalies().stream()
                .filter(a -> a.kind() == AnomalyKind.LOSS_NONFINITE).count()).isEqualTo(1);

        spec("grad", "bf16");
        for (int i = 0; i < 6; i++) {
            Double grad = i < 3 ? Double.valueOf(1.0) : i % 2 == 1 ? Double.valueOf(Double.POSITIVE_INFINITY) : null;
            report("grad", 0.2, grad);
        }
        report("grad", 0.2, Double.POSITIVE_INFINITY);
        assertThat(active("grad", AnomalyKind.LOSS_NONFINITE)).as("an infinite grad norm on every line that has one")
                .isPresent();
    }

    @Test
    void aJumpThatStaysIsASpikeAndOneHighReportIsNot() {
        spec("spike", "bf16");
        Random r = new Random(3);
        for (int i = 0; i < 40; i++) {
            report("spike", 0.15 + r.nextGaussian() * 0.01, 1.0);
        }
        report("spike", 0.45, 1.0); // one bad batch
        for (int i = 0; i < 10; i++) {
            report("spike", 0.15 + r.nextGaussian() * 0.01, 1.0);
        }
        assertThat(ever("spike", AnomalyKind.LOSS_SPIKE)).isFalse();
        for (int i = 0; i < 3; i++) {
            report("spike", 0.40 + r.nextGaussian() * 0.01, 1.0);
        }
        assertThat(ever("spike", AnomalyKind.LOSS_SPIKE)).as("three high reports are not yet 'stayed'").isFalse();
        report("spike", 0.41, 1.0);
        Anomaly a = active("spike", AnomalyKind.LOSS_SPIKE).orElseThrow();
        assertThat(a.severity()).isEqualTo(Severity.WARNING);
        assertThat(a.message()).containsPattern("jumped to 0\\.(39|40|41)\\d* from 0\\.1[45]");
        assertThat((Double) a.evidence().get("ratio")).isGreaterThan(2.5);
    }

    @Test
    void noisyPlateauedMultiBucketAndRestartedRunsStayQuiet() {
        spec("quiet", "bf16");
        Random r = new Random(11);
        // Noisy per-step loss (a diffusion loss depends on the sampled timestep): lognormal around 0.12.
        for (int i = 0; i < 200; i++) {
            report("quiet", 0.12 * Math.exp(r.nextGaussian() * 0.35), 1.0);
        }
        // A plateau with a 10 % bump that stays.
        for (int i = 0; i < 40; i++) {
            report("quiet", 0.1 + r.nextGaussian() * 0.0005, 1.0);
        }
        for (int i = 0; i < 20; i++) {
            report("quiet", 0.11 + r.nextGaussian() * 0.0005, 1.0);
        }
        // Multi-scale buckets with their own loss levels, in random order.
        for (int i = 0; i < 120; i++) {
            boolean large = r.nextBoolean();
            report("quiet", (large ? 0.30 : 0.10) + r.nextGaussian() * 0.01, 1.0, large ? 128 : 64);
        }
        // A restart from scratch after the job was requeued: the step goes back and the loss is high again.
        clock.advanceSeconds(180);
        step = 0;
        for (int i = 0; i < 10; i++) {
            report("quiet", 1.0 - i * 0.02, 1.0);
        }
        assertThat(ever("quiet", AnomalyKind.LOSS_SPIKE)).isFalse();
        assertThat(ever("quiet", AnomalyKind.LOSS_NONFINITE)).isFalse();
    }

    @Test
    void aRealDitLogStaysQuiet() throws IOException {
        Path log = RequiredFixtures.corpusLog("dit_xl2_domainguidance_log.txt");
        Matcher m = Pattern.compile("\\(step=(\\d+)\\) Train Loss: ([0-9.]+), Train Steps/Sec: ([0-9.]+)")
                .matcher(Files.readString(log));
        int n = 0;
        while (m.find()) {
            clock.advanceSeconds(100 / Double.parseDouble(m.group(3)));
            fleet.ingestSteps("dit", List.of(new StepEvent(Long.parseLong(m.group(1)), 1 / Double.parseDouble(m.group(3)),
                    null, null, null, null, 100, null, Double.parseDouble(m.group(2)), null, null, null, null, null,
                    clock.seconds(), null)));
            fleet.tick();
            n++;
        }
        assertThat(n).isEqualTo(64);
        assertThat(fleet.run("dit").orElseThrow().anomalies()).noneMatch(a -> a.kind() == AnomalyKind.LOSS_SPIKE
                || a.kind() == AnomalyKind.LOSS_NONFINITE);
        assertThat(fleet.run("dit").orElseThrow().observed().loss()).isEqualTo(0.1590);
    }
}
