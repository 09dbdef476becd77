package dev.trainwatch.collector.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.collector.state.RunAccounting.Reason;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.StepEvent;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The goodput ledger on traces with injected ground truth: each trace is built from known stretches (start-up,
 * steps with known data and encoding time, a checkpoint, a hang, a restart), and the ledger's parts must match
 * them and sum to the wall time within 1%.
 */
class RunAccountingTest {

    private static final double T0 = 1_800_000_000;

    /** Reports every {@code interval} steps of {@code stepS} seconds from {@code from} for {@code reports}. */
    private static double train(RunAccounting a, double from, long firstStep, int reports, int interval, double stepS,
            double dataS, Double lmS, Double vaeS, double encodingPerStep) {
        double t = from;
        long step = firstStep;
        for (int i = 0; i < reports; i++) {
            t += interval * stepS;
            step += interval;
            a.step(new StepEvent(step, stepS, dataS, null, lmS, vaeS, interval, null, 0.1, null, null, null, null,
                    null, t, null), t, encodingPerStep);
        }
        return t;
    }

    private static void busy(RunAccounting a, double from, double to, double util) {
        for (double t = from + 1; t <= to; t += 1) {
            a.gpuSample("GPU-0", sample(t, util, 300.0, null), t);
        }
    }

    private static GpuSample sample(double ts, double util, Double watts, Double energy) {
        return new GpuSample(ts, 0, "GPU-0", "NVIDIA A100-SXM4-80GB", null, null, null, null, null, util, null,
                null, null, null, null, null, List.of(), watts, null, energy, null, null, List.of(), false, null);
    }

    private static void assertSumsToWall(Map<Reason, Double> parts, double wall) {
        double sum = parts.values().stream().mapToDouble(Double::doubleValue).sum();
        assertThat(sum).isCloseTo(wall, within(0.01 * wall));
    }

    @Test
    void healthyRunIsStartUpThenStepsSplitByItsOwnTimers() {
        RunAccounting a = new RunAccounting(T0);
        // 90 s of start-up (loading T5, the dataset), then Sana-like reports: 20 steps of 1.4 s, 0.1 s data, 0.2 s
        // text encoder and 0.1 s VAE per step (online encoding the log splits out), for an hour.
        double end = train(a, T0 + 90, 0, 128, 20, 1.4, 0.1, 0.2, 0.1, 0);
        Map<Reason, Double> parts = a.wallSeconds(end);
        double steps = end - T0 - 90;
        assertThat(parts.get(Reason.STARTUP)).isCloseTo(90, within(0.5));
        assertThat(parts.get(Reason.DATA_WAIT)).isCloseTo(steps * 0.1 / 1.4, within(0.01 * steps));
        assertThat(parts.get(Reason.ENCODING)).isCloseTo(steps * 0.3 / 1.4, within(0.01 * steps));
        assertThat(parts.get(Reason.PRODUCTIVE)).isCloseTo(steps * 1.0 / 1.4, within(0.01 * steps));
        assertThat(parts).doesNotContainKeys(Reason.STALL, Reason.IDLE, Reason.LOST_WORK, Reason.PENDING);
        assertSumsToWall(parts, end - T0);
        assertThat(a.goodput(end)).isCloseTo(steps / 1.4 / (end - T0), within(0.01));
    }

    @Test
    void noisyReportsWithJitterStayOutOfTheLostParts() {
        RunAccounting a = new RunAccounting(T0);
        double t = T0 + 30;
        long step = 0;
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 200; i++) {
            // The report's smoothed step time says 1.0 s; the real span wanders by up to 4 s (logging, a slow batch).
            t += 20 + random.nextDouble() * 4;
            step += 20;
            a.step(new StepEvent(step, 1.0 + random.nextGaussian() * 0.05, null, null, null, null, 20, null, null,
                    null, null, null, null, null, t, null), t, 0);
        }
        Map<Reason, Double> parts = a.wallSeconds(t);
        assertThat(parts).doesNotContainKeys(Reason.STALL, Reason.IDLE);
        assertSumsToWall(parts, t - T0);
    }

    @Test
    void pixartDataTimeIsSplitIntoOnlineEncodingByThePrediction() {
        RunAccounting a = new RunAccounting(T0);
        // PixArt with online features: time_data 3.0 s of a 4.0 s step; the prediction says 2.5 s is encoding.
        double end = train(a, T0, 0, 50, 10, 4.0, 3.0, null, null, 2.5);
        Map<Reason, Double> parts = a.wallSeconds(end);
        double steps = end - T0;
        assertThat(parts.get(Reason.ENCODING)).isCloseTo(steps * 2.5 / 4, within(0.01 * steps));
        assertThat(parts.get(Reason.DATA_WAIT)).isCloseTo(steps * 0.5 / 4, within(0.01 * steps));
        assertThat(parts.get(Reason.PRODUCTIVE)).isCloseTo(steps * 1.0 / 4, within(0.01 * steps));
    }

    @Test
    void announcedCheckpointIsACheckpointAndAnUnannouncedPauseWithBusyGpusIsAStall() {
        RunAccounting a = new RunAccounting(T0);
        double t = train(a, T0, 0, 30, 20, 1.0, 0.0, null, null, 0);
        // Checkpoint: announced, 120 s, then training resumes.
        a.phase("checkpoint", t + 1);
        busy(a, t, t + 121, 0.3);
        t = train(a, t + 121, 600, 10, 20, 1.0, 0.0, null, null, 0);
        // A hang: 300 s, GPUs spinning at 100% (a stuck collective), no announcement.
        busy(a, t, t + 300, 1.0);
        double resumed = t + 300;
        t = train(a, resumed, 800, 10, 20, 1.0, 0.0, null, null, 0);
        Map<Reason, Double> parts = a.wallSeconds(t);
        assertThat(parts.get(Reason.CHECKPOINT)).isCloseTo(120, within(1.0));
        assertThat(parts.get(Reason.STALL)).isCloseTo(300, within(1.0));
        assertThat(parts.get(Reason.PRODUCTIVE)).isCloseTo(50 * 20 + 1, within(1.5));
        assertSumsToWall(parts, t - T0);
    }

    @Test
    void pauseWithIdleGpusIsIdleAndAnEvaluationIsAnEvaluation() {
        RunAccounting a = new RunAccounting(T0);
        double t = train(a, T0, 0, 10, 20, 1.0, 0.0, null, null, 0);
        busy(a, t, t + 200, 0.0);
        t = train(a, t + 200, 200, 10, 20, 1.0, 0.0, null, null, 0);
        a.phase("evaluation", t);
        busy(a, t, t + 90, 0.8);
        t = train(a, t + 90, 400, 10, 20, 1.0, 0.0, null, null, 0);
        Map<Reason, Double> parts = a.wallSeconds(t);
        assertThat(parts.get(Reason.IDLE)).isCloseTo(200, within(1.0));
        assertThat(parts.get(Reason.EVALUATION)).isCloseTo(90, within(1.0));
        assertThat(parts).doesNotContainKey(Reason.STALL);
        assertSumsToWall(parts, t - T0);
    }

    @Test
    void restartFromACheckpointCountsStartUpAndTheRepeatedStepsAsLostWork() {
        RunAccounting a = new RunAccounting(T0);
        // 1,000 steps of 1 s; the last checkpoint was at step 800; the job dies, restarts 240 s later at step 800.
        double t = train(a, T0, 0, 50, 20, 1.0, 0.0, null, null, 0);
        double restartAt = t + 240;
        t = train(a, restartAt, 800, 20, 20, 1.0, 0.0, null, null, 0);
        Map<Reason, Double> parts = a.wallSeconds(t);
        assertThat(parts.get(Reason.STARTUP)).isCloseTo(240, within(1.0));
        assertThat(parts.get(Reason.LOST_WORK)).isCloseTo(200, within(1.0)); // steps 801..1000 again
        assertThat(parts.get(Reason.PRODUCTIVE)).isCloseTo(1000 + 200, within(1.0));
        assertSumsToWall(parts, t - T0);
    }

    @Test
    void timeSinceTheNewestReportIsPendingThenAGap() {
        RunAccounting a = new RunAccounting(T0);
        double t = train(a, T0, 0, 10, 20, 1.0, 0.0, null, null, 0);
        Map<Reason, Double> soon = a.wallSeconds(t + 25);
        assertThat(soon.get(Reason.PENDING)).isCloseTo(25, within(0.01));
        assertThat(soon).doesNotContainKey(Reason.STALL);
        busy(a, t, t + 600, 1.0);
        Map<Reason, Double> later = a.wallSeconds(t + 600);
        assertThat(later.get(Reason.PENDING)).isCloseTo(40, within(0.01)); // twice the usual 20 s span
        assertThat(later.get(Reason.STALL)).isCloseTo(560, within(0.01));
        assertSumsToWall(later, t + 600 - T0);
        // When the next report comes, the stall counted so far stays counted (counters never go down).
        a.step(new StepEvent(220L, 1.0, null, null, null, null, 20, null, null, null, null, null, null, null,
                t + 620, null), t + 620, 0);
        assertThat(a.wallSeconds(t + 620).get(Reason.STALL)).isGreaterThanOrEqualTo(560);
    }

    @Test
    void attachingToARunAlreadyTrainingIsNotStartUp() {
        RunAccounting a = new RunAccounting(T0);
        double t = train(a, T0 + 7, 52_000, 20, 20, 1.0, 0.0, null, null, 0);
        Map<Reason, Double> parts = a.wallSeconds(t);
        assertThat(parts).doesNotContainKey(Reason.STARTUP);
        assertThat(parts.get(Reason.PRODUCTIVE)).isCloseTo(t - T0, within(0.01));
    }

    @Test
    void aPerEpochCounterThatStartsAgainIsNotARestart() {
        RunAccounting a = new RunAccounting(T0);
        double t = T0;
        // A per-epoch progress bar: steps 50, 100, ..., 1000, then 50 again in the next epoch, every 20 s.
        for (int epoch = 0; epoch < 4; epoch++) {
            for (long step = 50; step <= 1000; step += 50) {
                t += 20;
                a.step(new StepEvent(step, 0.4, null, null, null, null, 50, null, null, null, null, null, null, null,
                        t, null), t, 0);
            }
        }
        Map<Reason, Double> parts = a.wallSeconds(t);
        assertThat(parts).doesNotContainKeys(Reason.LOST_WORK, Reason.STALL);
        assertThat(a.goodput(t)).isGreaterThan(0.95);
    }

    @Test
    void aLogWithoutIntervalsStillCountsItsStartUp() {
        RunAccounting a = new RunAccounting(T0);
        // DiT logs every 100 steps, no interval in the line; the first line after 640 s of start-up says step=100.
        // Its span is unknown (one report, no interval), so at least the start-up is start-up, not "training".
        double t = T0 + 640 + 100 * 0.5;
        a.step(new StepEvent(100L, 0.5, null, null, null, null, null, null, null, null, null, null, null, null, t, null), t,
                0);
        assertThat(a.wallSeconds(t).get(Reason.STARTUP)).isBetween(640.0, 690.0);
        assertThat(a.goodput(t)).isLessThan(0.1);
    }

    @Test
    void energyFromTheCounterElseFromPowerAndGpuTimeSkipsTheAgentsAbsence() {
        RunAccounting a = new RunAccounting(T0);
        for (int i = 0; i <= 60; i++) {
            a.gpuSample("GPU-0", sample(T0 + i, 1.0, 400.0, 1_000_000.0 + 350.0 * i), T0 + i);
        }
        assertThat(a.energyJoules()).isCloseTo(60 * 350.0, within(1e-6)); // the counter wins over power
        // The driver reloads: the counter starts again from 0; that stretch falls back to power.
        a.gpuSample("GPU-0", sample(T0 + 61, 1.0, 400.0, 5.0), T0 + 61);
        assertThat(a.energyJoules()).isCloseTo(60 * 350.0 + 400, within(1e-6));
        // The agent is away for 10 minutes: neither GPU time nor energy is invented for it.
        a.gpuSample("GPU-0", sample(T0 + 661, 1.0, 400.0, 200_000.0), T0 + 661);
        assertThat(a.gpuSeconds()).isCloseTo(61, within(1e-6));
        // A GPU without an energy counter: power x time.
        RunAccounting b = new RunAccounting(T0);
        for (int i = 0; i <= 10; i++) {
            b.gpuSample("GPU-1", sample(T0 + i, 1.0, 250.0, null), T0 + i);
        }
        assertThat(b.energyJoules()).isCloseTo(2500, within(1e-6));
        assertThat(new RunAccounting(T0).energyJoules()).isNaN();
    }
}
