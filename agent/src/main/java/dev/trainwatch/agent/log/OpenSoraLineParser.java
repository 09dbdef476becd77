package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;

/**
 * Open-Sora 2.0 ({@code scripts/diffusion/train.py}) prints steps to the console, not its {@code log.txt}: with
 * {@code record_time=True} every rank prints {@code Rank {rank} | Epoch {epoch} | Step {step} | load_data: {t:.2f} s |
 * iter: … s | encode_video: … s | encode_text: … s | forward: … s | backward: … s | …} ({@code forward-backward}
 * with pipeline parallelism; step counts from 0 within the epoch); always rank 0's bar {@code Epoch {epoch}: 1%|▏ |
 * 100/10000 [05:01<8:17:02, 3.01s/it, loss=0.123, global_grad_norm=0.456, step=99, global_step=99, lr=1e-05]}; at
 * start {@code Training for {epochs} epochs with {n} steps per epoch}. Steps completed are
 * {@code epoch × steps_per_epoch + step + 1} (timer) or {@code epoch × total + n} (bar); once timer lines appear the
 * bar is ignored.
 */
final class OpenSoraLineParser extends PresetLineParser {

    private static final String STEPS_PER_EPOCH = " steps per epoch";

    private long stepsPerEpoch = -1;
    private boolean timersSeen;
    private long lastBarStep = -1;
    private final IntervalTracker barIntervals = new IntervalTracker();

    OpenSoraLineParser() {
        super("opensora", "| Step ", "s/it", "it/s", STEPS_PER_EPOCH);
    }

    @Override
    public StepEvent parse(String line) {
        int step = line.indexOf("| Step ");
        if (step >= 0) {
            return parseTimers(line, step);
        }
        if (line.indexOf("s/it") >= 0 || line.indexOf("it/s") >= 0) {
            TqdmBar bar = epochBar(line);
            return timersSeen ? null : parseBar(bar);
        }
        int spe = line.indexOf(STEPS_PER_EPOCH);
        if (spe >= 0) {
            int with = line.lastIndexOf(" with ", spe);
            long n = with < 0 ? -1 : LineFields.longAt(line, with + " with ".length());
            if (n > 0) {
                stepsPerEpoch = n;
            }
        }
        return null;
    }

    private StepEvent parseTimers(String line, int stepAt) {
        int rankAt = line.lastIndexOf("Rank ", stepAt);
        int epochAt = line.lastIndexOf("| Epoch ", stepAt);
        if (rankAt < 0 || epochAt < rankAt) {
            return null;
        }
        long rank = LineFields.longAt(line, rankAt + "Rank ".length());
        long epoch = LineFields.longAt(line, epochAt + "| Epoch ".length());
        long local = LineFields.longAt(line, stepAt + "| Step ".length());
        if (rank < 0 || epoch < 0 || local < 0) {
            return null;
        }
        if (rankAt > 0) {
            epochBar(line.substring(0, rankAt));
        }
        double outside = 0;
        double sumAll = 0;
        Double loadData = null;
        Double iter = null;
        Double model = null;
        Double encodeVideo = null;
        Double encodeText = null;
        int pos = line.indexOf(" | ", stepAt + "| Step ".length());
        while (pos >= 0) {
            int nameStart = pos + 3;
            int colon = line.indexOf(": ", nameStart);
            int next = line.indexOf(" | ", nameStart);
            if (colon < 0 || (next >= 0 && colon > next)) {
                break;
            }
            Double v = LineFields.doubleAt(line, colon + 2);
            if (v != null) {
                String name = line.substring(nameStart, colon);
                sumAll += v;
                switch (name) {
                    case "load_data" -> loadData = v;
                    case "iter" -> iter = v;
                    case "encode_video" -> encodeVideo = v;
                    case "encode_text" -> encodeText = v;
                    case "forward", "backward", "forward-backward", "optim", "update_ema" ->
                            model = (model == null ? 0 : model) + v;
                    default -> outside += v;
                }
            }
            pos = next;
        }
        if (sumAll == 0 && iter == null && loadData == null) {
            return null;
        }
        timersSeen = true;
        // "iter" encloses the encoders and the model; the step is everything at the top level.
        double time = iter != null ? (loadData == null ? 0 : loadData) + iter + outside : sumAll;
        long completed = local + 1;
        long global = stepsPerEpoch > 0 ? epoch * stepsPerEpoch + completed : completed;
        return new StepEvent(global, time, loadData, model, encodeText, encodeVideo,
                1, null, null, null, null, null, null, (int) Math.min(rank, Integer.MAX_VALUE), null, null);
    }

    private TqdmBar epochBar(String line) {
        TqdmBar bar = TqdmBar.parse(line);
        if (bar == null || !bar.desc().startsWith("Epoch ")) {
            return null;
        }
        if (bar.total() > 0) {
            stepsPerEpoch = bar.total();
        }
        return bar;
    }

    private StepEvent parseBar(TqdmBar bar) {
        if (bar == null || !bar.postfix().containsKey("global_step") || bar.n() == 0) {
            return null;
        }
        long epoch = LineFields.longAt(bar.desc(), "Epoch ".length());
        if (epoch < 0 || bar.total() <= 0) {
            return null;
        }
        long global = epoch * bar.total() + bar.n();
        if (global == lastBarStep) {
            return null;
        }
        lastBarStep = global;
        return new StepEvent(global, bar.secondsPerIter(), null, null, null, null,
                IntervalTracker.steps(barIntervals.observe(global)), null, bar.reading("loss"), bar.number("lr"),
                bar.firstReading("global_grad_norm", "grad_norm"), null, null, null, null, null);
    }
}
