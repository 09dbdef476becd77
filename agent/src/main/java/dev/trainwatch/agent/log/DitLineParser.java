package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * DiT ({@code train.py}, rank 0 through its logger every {@code --log-every} steps, default 100):
 *
 * <pre>
 * (step={train_steps:07d}) Train Loss: {avg_loss:.4f}, Train Steps/Sec: {steps_per_sec:.2f}
 * </pre>
 *
 * Only throughput is logged: the step time is {@code 1 / steps_per_sec} (the script measures the rate over
 * exactly the steps since the previous line, so no rescaling is needed) and the interval is the gap between
 * consecutive step numbers. A rate printed as {@code 0.00} carries no time and is left to the caller's
 * timestamp-based fallback.
 */
final class DitLineParser implements StepLineParser {

    private final IntervalTracker intervals = new IntervalTracker();

    private static final String[] QUICK_CHECK = {"(step="};

    @Override
    public String[] quickCheck() {
        return QUICK_CHECK;
    }

    @Override
    public String name() {
        return "dit";
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
        long gap = intervals.observe(step);
        return new StepEvent(step, time, null, null, null, null,
                gap > 0 ? (int) Math.min(gap, Integer.MAX_VALUE) : null, null, loss, null, null, null, null, null,
                null, null);
    }
}
