package dev.trainwatch.collector.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.state.RunSummary;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
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
    void aRunAt1point4TimesThePredictionMovesTheNextEstimateOfItsFamilyOnly() {
        Estimator estimator = Estimator.bundled();
        double pixartBefore = estimator.estimate(PIXART).stepSeconds();
        double ditBefore = estimator.estimate(DIT).stepSeconds();

        try (HistoryStore store = HistoryStore.open(dir)) {
            CalibratingPredictor predictor = new CalibratingPredictor(estimator);
            HistoryRecorder recorder = new HistoryRecorder(store, predictor::rawPrediction,
                    outcome -> predictor.recalibrate(Calibrator.factors(store.outcomes())), line -> { });
            double observed = 1.4 * pixartBefore;
            recorder.onRunEnded(new RunSummary("pixart-finished", PIXART, 1000.0, 9000.0, true, 9000.0, 20_000L,
                    8999.0, observed, pixartBefore, null, null, 0.9, 256 / observed, List.of("n1"), List.of(),
                    List.of(), null));
            recorder.flush(); // the writer's thread is not started here: write the ended run now

            double pixartAfter = predictor.estimate(PIXART).stepSeconds();
            assertThat(pixartAfter / pixartBefore).isBetween(1.25, 1.4); // most of the way from 1.0 to 1.4
            assertThat(predictor.estimate(DIT).stepSeconds()).isEqualTo(ditBefore);
            assertThat(predictor.estimate(PIXART.overriddenBy(new RunSpec(null, "h100-sxm", null, null, null, null,
                    null, null, null, null, null, null, null, null, null, null, null))).stepSeconds())
                    .isEqualTo(estimator.estimate(PIXART.overriddenBy(new RunSpec(null, "h100-sxm", null, null, null,
                            null, null, null, null, null, null, null, null, null, null, null, null)))
                            .stepSeconds());
        }
        try (HistoryStore reopened = HistoryStore.open(dir)) {
            CalibratingPredictor afterRestart = new CalibratingPredictor(estimator);
            afterRestart.recalibrate(Calibrator.factors(reopened.outcomes()));
            assertThat(afterRestart.estimate(PIXART).stepSeconds() / pixartBefore).isBetween(1.25, 1.4);
        }
    }
}
