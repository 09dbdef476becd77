package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.view.RunSummary;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Finished runs calibrate the estimator: a run observed at 1.4× its predicted step time moves the next estimate
 * for the same GPU and model family most of the way there; another family on the same GPU does not move. Runs
 * through the real estimator, the SQLite store and a reopened store (as after a restart).
 */
class CalibrationTest {
    private static final RunSpec PIXART = new RunSpec("pixart-alpha-xl-2", "a100-80gb", 8, 32, 512, null, null,
            null, "bf16", "adamw", true, false, "precomputed", 0, null, null, null);
    private static final RunSpec DIT = new RunSpec("dit-xl-2", "a100-80gb", 8, 32, 256, null, null, null, "bf16",
            "adamw", false, true, "precomputed", 0, null, null, null);

    @TempDir
    Path dir;

    @Test
    void finishedRunsAt1point4TimesThePredictionMoveTheNextEstimateOfTheirFamilyOnceThreeAgree() {
        Estimator estimator = Estimator.bundled();
        double pixartBefore = estimator.estimate(PIXART).stepSeconds();
        double ditBefore = estimator.estimate(DIT).stepSeconds();

        try (HistoryStore store = HistoryStore.open(dir)) {
            CalibratingPredictor predictor = new CalibratingPredictor(estimator);
            HistoryRecorder recorder = new HistoryRecorder(store, predictor::rawPrediction,
                    outcome -> predictor.recalibrate(Calibrator.factors(store)), line -> { }, Duration.ofSeconds(2),
                    Clock.systemUTC());
            double observed = 1.4 * pixartBefore;
            for (int i = 0; i < 3; i++) {
                recorder.onRunEnded(new RunSummary("pixart-finished-" + i, PIXART, 1000.0 + i, 9000.0 + i, true,
                        9000.0 + i, 20_000L, 8999.0, observed, pixartBefore, null, null, 0.9, 256 / observed,
                        List.of("n1"), List.of(), List.of(), null, null, null, null));
                recorder.writer().flush(); // the writer's thread is not started here: write the ended run now
                double ratio = predictor.estimate(PIXART).stepSeconds() / pixartBefore;
                if (i < 2) {
                    assertThat(ratio).as("after %d run(s): not enough evidence yet", i + 1).isEqualTo(1.0);
                }
            }
            double pixartAfter = predictor.estimate(PIXART).stepSeconds();
            // 1.4 shrunk as if two runs had matched the prediction: 1.4^(3/5) = 1.224
            assertThat(pixartAfter / pixartBefore).isBetween(1.2, 1.25);
            assertThat(predictor.estimate(DIT).stepSeconds()).isEqualTo(ditBefore);
            assertThat(predictor.estimate(PIXART.overriddenBy(new RunSpec(null, "h100-sxm", null, null, null, null,
                    null, null, null, null, null, null, null, null, null, null, null))).stepSeconds())
                    .isEqualTo(estimator.estimate(PIXART.overriddenBy(new RunSpec(null, "h100-sxm", null, null, null,
                            null, null, null, null, null, null, null, null, null, null, null, null)))
                            .stepSeconds());

            // Excluding one of the three leaves too little evidence: back to the estimator's own figure.
            store.excludeFromCalibration("pixart-finished-1", true, java.time.Instant.now());
            predictor.recalibrate(Calibrator.factors(store));
            assertThat(predictor.estimate(PIXART).stepSeconds()).isEqualTo(pixartBefore);
        }
        try (HistoryStore reopened = HistoryStore.open(dir)) {
            // The exclusion is kept across a restart; counting the run again restores the factor.
            CalibratingPredictor afterRestart = new CalibratingPredictor(estimator);
            afterRestart.recalibrate(Calibrator.factors(reopened));
            assertThat(afterRestart.estimate(PIXART).stepSeconds()).isEqualTo(pixartBefore);
            reopened.excludeFromCalibration("pixart-finished-1", false, java.time.Instant.now());
            afterRestart.recalibrate(Calibrator.factors(reopened));
            assertThat(afterRestart.estimate(PIXART).stepSeconds() / pixartBefore).isBetween(1.2, 1.25);
            // A reset starts the group afresh.
            reopened.resetCalibration(Calibrator.key("a100-80gb", afterRestart.factors().get(0).family()),
                    java.time.Instant.now().plusSeconds(1));
            afterRestart.recalibrate(Calibrator.factors(reopened));
            assertThat(afterRestart.estimate(PIXART).stepSeconds()).isEqualTo(pixartBefore);
        }
    }
}
