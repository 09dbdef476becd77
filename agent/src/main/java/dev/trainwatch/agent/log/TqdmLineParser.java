package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * accelerate / diffusers scripts' bar: {@code Steps:  10%|█         | 100/1000 [01:40<15:00,  1.00s/it, step_loss=0.123,
 * lr=1e-05]} (diffusers starts the counter at the resumed global step). Only training bars count (a {@code Steps}
 * description or a loss in the postfix); every frame is returned, a redraw keeps the first frame's interval.
 */
final class TqdmLineParser extends PresetLineParser {

    private static final Set<String> TRAINING_DESCRIPTIONS =
            Set.of("steps", "step", "training", "train", "training steps", "global step", "iteration", "iterations");

    private final IntervalTracker intervals = new IntervalTracker();
    private long lastN = -1;
    private Integer lastInterval;

    private long epochOffset;
    private long epochBarN = -1;
    private long epochBarTotal;
    private String epochBarElapsed;
    private Double epochBarLoss;

    TqdmLineParser() {
        super("accelerate", "s/it", "it/s");
    }

    @Override
    public boolean redraws() {
        return true;
    }

    @Override
    public StepEvent parse(String line) {
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
            lastInterval = IntervalTracker.steps(gap);
        }
        return new StepEvent(step, bar.secondsPerIter(), null, null, null, null, lastInterval, null,
                bar.loss(), bar.number("lr"),
                bar.firstReading("grad_norm", "global_grad_norm"), null, null, null, null, null);
    }

    /**
     * OneTrainer's step bar (postfix {@code loss=…, smooth loss=…}) restarts inside its {@code epoch} bar: a new epoch
     * shows by a counter going back, or (finished bars kept on screen) a finished frame with other elapsed and loss.
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

    private static String elapsed(String line) {
        int rate = line.lastIndexOf(" [");
        int end = rate < 0 ? -1 : line.indexOf('<', rate);
        return end < 0 ? null : line.substring(rate + 2, end);
    }
}
