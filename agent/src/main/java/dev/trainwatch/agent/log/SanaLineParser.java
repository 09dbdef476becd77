package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * Sana ({@code train_scripts/train.py}, main process only): {@code Epoch: {epoch} | Global Step: {global_step} | Local
 * Step: {current_step} // {steps}, total_eta: {eta}, epoch_eta:{eta}, time: all:{t:.3f}, model:{t_m:.3f},
 * data:{t_d:.3f}, lm:{t_lm:.3f}, vae:{t_vae:.3f}, lr:{lr:.3e}s:({h}, {w}), loss:{loss:.4f}, grad_norm:{g:.4f}}. Some
 * releases put {@code , } before {@code s:(}. Times are interval totals over the configured interval, as PixArt's;
 * trailing fields are searched from the end because some variants print the caption ({@code Cap: …}) mid-line.
 */
final class SanaLineParser extends PresetLineParser {

    private final IntervalTracker intervals = new IntervalTracker();

    SanaLineParser() {
        super("sana", "Global Step:");
    }

    @Override
    public StepEvent parse(String line) {
        int global = line.indexOf("Global Step:");
        if (global < 0) {
            return null;
        }
        int all = line.indexOf("all:", global);
        if (all < 0) {
            return null;
        }
        long step = LineFields.longAt(line, global + "Global Step:".length());
        if (step < 0) {
            return null;
        }
        Double time = LineFields.doubleAt(line, all + "all:".length());
        if (time == null) {
            return null;
        }
        int local = line.indexOf("Local Step:", global);
        long localStep = local < 0 ? -1 : LineFields.longAt(line, local + "Local Step:".length());
        boolean first = intervals.isFirst();
        long gap = intervals.observe(step);
        if (first && localStep == 1) {
            return null;
        }
        double scale = intervals.rescale(gap);
        Double model = scaled(LineFields.doubleAfter(line, "model:", all), scale);
        Double data = scaled(LineFields.doubleAfter(line, "data:", all), scale);
        Double lm = scaled(LineFields.doubleAfter(line, "lm:", all), scale);
        Double vae = scaled(LineFields.doubleAfter(line, "vae:", all), scale);
        Double lr = LineFields.doubleAfter(line, "lr:", all);
        int bucket = line.lastIndexOf("s:(");
        int[] hw = bucket > all ? LineFields.pairAt(line, bucket + 2) : null;
        int lossAt = LineFields.lastIndexOfKey(line, "loss:");
        Double loss = lossAt > all ? LineFields.readingAt(line, lossAt + "loss:".length()) : null;
        int gradAt = LineFields.lastIndexOfKey(line, "grad_norm:");
        Double gradNorm = gradAt > all ? LineFields.readingAt(line, gradAt + "grad_norm:".length()) : null;
        return new StepEvent(step, time * scale, data, model, lm, vae,
                IntervalTracker.steps(gap), null, loss, lr, gradNorm, hw == null ? null : hw[0], hw == null ? null : hw[1], null,
                null, null);
    }

    private static Double scaled(Double v, double scale) {
        return v == null ? null : v * scale;
    }
}
