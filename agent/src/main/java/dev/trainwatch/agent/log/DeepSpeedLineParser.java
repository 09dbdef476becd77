package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * DeepSpeed's engine report every {@code steps_per_print} steps (diffusion-pipe and other pipeline-engine trainers):
 * {@code steps: 78 loss: 0.1150 iter time (s): 18.305 samples/sec: 0.219}, the lr from the {@code log_dist} line
 * {@code [Rank 0] step=78, skipped=0, lr=[1.5644e-05], mom=[0.0]} just before. Samples per step are samples/sec ×
 * iter time.
 */
final class DeepSpeedLineParser extends PresetLineParser {

    private static final String STEPS = "steps: ";
    private static final String ITER_TIME = "iter time (s):";

    private final IntervalTracker intervals = new IntervalTracker();
    private long lrStep = -1;
    private Double lr;

    DeepSpeedLineParser() {
        super("deepspeed", ITER_TIME, "skipped=");
    }

    @Override
    public StepEvent parse(String line) {
        int time = line.indexOf(ITER_TIME);
        if (time < 0) {
            rememberLr(line);
            return null;
        }
        int at = line.lastIndexOf(STEPS, time);
        if (at < 0) {
            return null;
        }
        long step = LineFields.longAt(line, at + STEPS.length());
        Double seconds = LineFields.doubleAt(line, time + ITER_TIME.length());
        if (step < 0 || seconds == null) {
            return null;
        }
        Double loss = LineFields.readingAfter(line, "loss:", at);
        Double rate = LineFields.doubleAfter(line, "samples/sec:", time);
        Double samples = rate != null && rate > 0 ? (double) Math.round(rate * seconds) : null;
        return new StepEvent(step, seconds, null, null, null, null, IntervalTracker.steps(intervals.observe(step)),
                samples, loss, step == lrStep ? lr : null, null, null, null, null, null, null);
    }

    private void rememberLr(String line) {
        int skipped = line.indexOf(", skipped=");
        if (skipped < 0) {
            return;
        }
        int at = line.lastIndexOf("step=", skipped);
        int lrAt = line.indexOf("lr=[", skipped);
        if (at < 0 || lrAt < 0) {
            return;
        }
        lrStep = LineFields.longAt(line, at + "step=".length());
        lr = LineFields.doubleAt(line, lrAt + "lr=[".length());
    }
}
