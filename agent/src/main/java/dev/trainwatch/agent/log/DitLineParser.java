package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * DiT ({@code train.py}, rank 0 every {@code --log-every} steps): {@code (step={train_steps:07d}) Train Loss:
 * {avg_loss:.4f}, Train Steps/Sec: {steps_per_sec:.2f}}. The rate covers exactly the steps since the previous line; a
 * rate printed as {@code 0.00} is left to the caller's timestamp fallback.
 */
final class DitLineParser extends PresetLineParser {

    private final IntervalTracker intervals = new IntervalTracker();

    DitLineParser() {
        super("dit", "(step=");
    }

    @Override
    public StepEvent parse(String line) {
        int at = line.indexOf("(step=");
        if (at < 0) {
            return null;
        }
        int rateKey = line.indexOf("Steps/Sec:", at);
        if (rateKey < 0) {
            return null;
        }
        long step = LineFields.longAt(line, at + "(step=".length());
        if (step < 0) {
            return null;
        }
        Double rate = LineFields.doubleAt(line, rateKey + "Steps/Sec:".length());
        Double time = rate != null && rate > 0 ? 1.0 / rate : null;
        Double loss = LineFields.readingAfter(line, "Loss:", at);
        return new StepEvent(step, time, null, null, null, null, IntervalTracker.steps(intervals.observe(step)), null,
                loss, null, null, null, null, null, null, null);
    }
}
