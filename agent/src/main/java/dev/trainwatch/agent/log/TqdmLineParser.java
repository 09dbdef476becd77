package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.util.Locale;
import java.util.Objects;
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

    /** OneTrainer's per-epoch step bar: the steps of the epochs before the current one. */
    private long epochOffset;
    /** That bar's last frame: its counter, total, elapsed time and loss. */
    private long epochBarN = -1;
    private long epochBarTotal;
    private String epochBarElapsed;
    private Double epochBarLoss;

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
        long step = bar.postfix().containsKey("smooth loss") ? perEpochStep(bar, elapsed(line)) : bar.n();
        if (step != lastN) {
            long gap = intervals.observe(step);
            lastN = step;
            lastInterval = gap > 0 ? (int) Math.min(gap, Integer.MAX_VALUE) : null;
        }
        Double time = Double.isNaN(bar.secondsPerIter()) ? null : bar.secondsPerIter();
        return new StepEvent(step, time, null, null, null, null, lastInterval, null,
                bar.loss(), bar.number("lr"),
                bar.firstReading("grad_norm", "global_grad_norm"), null, null, null, null, null);
    }

    /**
     * The global step of a frame of OneTrainer's step bar (postfix {@code loss=…, smooth loss=…}), which counts the
     * steps of one epoch and starts again inside its outer {@code epoch} bar: the epochs before it times the bar's
     * total, plus its counter. A new epoch's bar shows itself by a counter that went back, or, where only each
     * epoch's last frame was kept (a console whose finished bars stay on screen), by a finished frame again with
     * another elapsed time and another loss (a redraw of the same frame keeps both).
     */
    private long perEpochStep(TqdmBar bar, String elapsed) {
        Double loss = bar.loss();
        boolean finishedAgain = bar.n() == epochBarN && bar.n() == bar.total()
                && !Objects.equals(elapsed, epochBarElapsed) && !Objects.equals(loss, epochBarLoss);
        if (epochBarN >= 0 && (bar.n() < epochBarN || finishedAgain)) {
            epochOffset += epochBarTotal > 0 ? epochBarTotal : epochBarN;
        }
        epochBarN = bar.n();
        epochBarTotal = bar.total();
        epochBarElapsed = elapsed;
        epochBarLoss = loss;
        return epochOffset + bar.n();
    }

    /** The elapsed time a bar frame shows ({@code 01:15} of {@code [01:15<00:00, …}), or null. */
    private static String elapsed(String line) {
        int rate = line.lastIndexOf(" [");
        int end = rate < 0 ? -1 : line.indexOf('<', rate);
        return end < 0 ? null : line.substring(rate + 2, end);
    }
}
