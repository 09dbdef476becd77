package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.util.Locale;
import java.util.Set;

/**
 * Hugging Face accelerate / diffusers example scripts: a tqdm bar on stderr, redrawn with carriage returns,
 * {@code Steps:  10%|█         | 100/1000 [01:40<15:00,  1.00s/it, step_loss=0.123, lr=1e-05]}. The step is the
 * bar's counter (diffusers starts it at the resumed global step), the step time tqdm's smoothed rate, in
 * {@code s/it} or {@code it/s}. Only training bars count: a description such as {@code Steps} or a postfix that
 * reports a loss; "Loading checkpoint shards" and the like are ignored. Every frame of a step is returned (the
 * last one carries the step's loss, see {@link #redraws()}); a redraw keeps the interval of the step's first frame.
 */
final class TqdmLineParser implements StepLineParser {

    private static final Set<String> TRAINING_DESCRIPTIONS =
            Set.of("steps", "step", "training", "train", "training steps", "global step", "iteration", "iterations");

    private final IntervalTracker intervals = new IntervalTracker();
    private long lastN = -1;
    private Integer lastInterval;

    private static final String[] QUICK_CHECK = {"s/it", "it/s"};

    @Override
    public String[] quickCheck() {
        return QUICK_CHECK;
    }

    @Override
    public String name() {
        return "accelerate";
    }

    @Override
    public boolean redraws() {
        return true;
    }

    @Override
    public StepEvent parse(String line) {
        if (line.indexOf("s/it") < 0 && line.indexOf("it/s") < 0) {
            return null;
        }
        TqdmBar bar = TqdmBar.parse(line);
        if (bar == null || !(bar.reportsLoss() || TRAINING_DESCRIPTIONS.contains(bar.desc().toLowerCase(Locale.ROOT)))) {
            return null;
        }
        if (bar.n() == 0) {
            return null;
        }
        if (bar.n() != lastN) {
            long gap = intervals.observe(bar.n());
            lastN = bar.n();
            lastInterval = gap > 0 ? (int) Math.min(gap, Integer.MAX_VALUE) : null;
        }
        Double time = Double.isNaN(bar.secondsPerIter()) ? null : bar.secondsPerIter();
        return new StepEvent(bar.n(), time, null, null, null, null, lastInterval, null,
                bar.loss(), bar.number("lr"),
                bar.firstReading("grad_norm", "global_grad_norm"), null, null, null, null);
    }
}
