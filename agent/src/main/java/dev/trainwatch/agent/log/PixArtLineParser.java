package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * PixArt-α / PixArt-Σ ({@code train_scripts/train.py}), every {@code log_interval} steps and at the first step
 * of each epoch:
 *
 * <pre>
 * Step/Epoch [{global_step}/{epoch}][{step+1}/{steps}]:total_eta: {eta}, epoch_eta:{eta}, time_all:{t:.3f},
 *     time_data:{t_d:.3f}, lr:{lr:.3e}, s:({h}, {w}), loss:{loss:.4f}, grad_norm:{g:.4f}
 * </pre>
 *
 * {@code time_all} and {@code time_data} are the interval's wall and data-loading seconds divided by the
 * configured {@code log_interval}; the interval is the gap between consecutive global steps, and irregular gaps
 * (epoch starts) are rescaled to a true per-step mean. The very first line of a run (step 1, no predecessor)
 * divides one step's time by the interval, so its time is unknown and it is dropped. {@code s:(h, w)} is absent
 * without multi-scale training; some versions omit the space before it.
 */
final class PixArtLineParser implements StepLineParser {

    private final IntervalTracker intervals = new IntervalTracker();

    private static final String[] QUICK_CHECK = {"time_all:"};

    @Override
    public String[] quickCheck() {
        return QUICK_CHECK;
    }

    @Override
    public String name() {
        return "pixart";
    }

    @Override
    public StepEvent parse(String line) {
        int timeAll = line.indexOf("time_all:");
        if (timeAll < 0) {
            return null;
        }
        int head = line.indexOf("Step/Epoch [");
        if (head < 0 || head > timeAll) {
            return null;
        }
        int stepStart = head + "Step/Epoch [".length();
        long step = LineFields.longAt(line, stepStart);
        if (step < 0) {
            return null;
        }
        int local = line.indexOf("][", stepStart);
        long localStep = local < 0 || local > timeAll ? -1 : LineFields.longAt(line, local + 2);
        Double time = LineFields.doubleAt(line, timeAll + "time_all:".length());
        if (time == null) {
            return null;
        }
        boolean first = intervals.isFirst();
        long gap = intervals.observe(step);
        if (first && localStep == 1) {
            return null;
        }
        double scale = intervals.rescale(gap);
        Double data = LineFields.doubleAfter(line, "time_data:", timeAll);
        Double lr = LineFields.doubleAfter(line, "lr:", timeAll);
        Integer h = null;
        Integer w = null;
        int bucket = line.indexOf("s:(", timeAll);
        if (bucket >= 0) {
            int[] hw = LineFields.pairAt(line, bucket + 2);
            if (hw != null) {
                h = hw[0];
                w = hw[1];
            }
        }
        int tail = Math.max(bucket, timeAll);
        Double loss = LineFields.readingAfter(line, "loss:", tail);
        Double gradNorm = LineFields.readingAfter(line, "grad_norm:", tail);
        return new StepEvent(step, time * scale, data == null ? null : data * scale, null, null, null,
                gap > 0 ? (int) Math.min(gap, Integer.MAX_VALUE) : null, null, loss, lr, gradNorm, h, w, null, null, null);
    }
}
