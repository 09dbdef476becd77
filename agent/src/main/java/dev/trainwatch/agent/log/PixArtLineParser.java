package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * PixArt-α/Σ ({@code train_scripts/train.py}), every {@code log_interval} steps and at each epoch's first step:
 * {@code Step/Epoch [{global_step}/{epoch}][{step+1}/{steps}]:total_eta: {eta}, epoch_eta:{eta}, time_all:{t:.3f},
 * time_data:{t_d:.3f}, lr:{lr:.3e}, s:({h}, {w}), loss:{loss:.4f}, grad_norm:{g:.4f}}. Times are the interval's
 * totals over {@code log_interval}, rescaled by the real gap; a run's first line (step 1) is dropped as unknown.
 */
final class PixArtLineParser extends PresetLineParser {

    private final IntervalTracker intervals = new IntervalTracker();

    PixArtLineParser() {
        super("pixart", "time_all:");
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
        int bucket = line.indexOf("s:(", timeAll);
        int[] hw = bucket >= 0 ? LineFields.pairAt(line, bucket + 2) : null;
        int tail = Math.max(bucket, timeAll);
        Double loss = LineFields.readingAfter(line, "loss:", tail);
        Double gradNorm = LineFields.readingAfter(line, "grad_norm:", tail);
        return new StepEvent(step, time * scale, data == null ? null : data * scale, null, null, null,
                IntervalTracker.steps(gap), null, loss, lr, gradNorm, hw == null ? null : hw[0], hw == null ? null : hw[1], null,
                null, null);
    }
}
