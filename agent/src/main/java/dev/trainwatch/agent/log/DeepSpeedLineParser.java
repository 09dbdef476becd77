package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * DeepSpeed's own step report, printed by its engine every {@code steps_per_print} steps (diffusion-pipe and any
 * other DeepSpeed pipeline-engine trainer):
 *
 * <pre>
 * [2025-03-28 19:56:05,234] [INFO] [logging.py:128:log_dist] [Rank 0] step=78, skipped=0, lr=[1.5644e-05], mom=[0.0]
 * steps: 78 loss: 0.1150 iter time (s): 18.305 samples/sec: 0.219
 * </pre>
 *
 * The time is DeepSpeed's mean over the steps since the previous report (its batch timer divided by
 * {@code steps_per_print}); samples per step are {@code samples/sec × iter time} (the global batch, gradient
 * accumulation included). The learning rate comes from the engine's {@code log_dist} line of the same step, printed
 * just before. Not thread-safe.
 */
final class DeepSpeedLineParser implements StepLineParser {

    private static final String STEPS = "steps: ";
    private static final String ITER_TIME = "iter time (s):";
    private static final String[] QUICK_CHECK = {ITER_TIME, "skipped="};

    private final IntervalTracker intervals = new IntervalTracker();
    private long lrStep = -1;
    private Double lr;

    @Override
    public String[] quickCheck() {
        return QUICK_CHECK;
    }

    @Override
    public String name() {
        return "deepspeed";
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
        long gap = intervals.observe(step);
        return new StepEvent(step, seconds, null, null, null, null,
                gap > 0 ? (int) Math.min(gap, Integer.MAX_VALUE) : null, samples, loss, step == lrStep ? lr : null,
                null, null, null, null, null, null);
    }

    /** The engine's {@code step=N, skipped=M, lr=[x]} record: the learning rate of the report that follows. */
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
