package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Units.gb;

import java.util.ArrayList;
import java.util.List;

/**
 * The plans that add GPUs to a run that does not fit: the fewest GPUs (8 … 512) on which ZeRO-2 and ZeRO-3 fit, with
 * the run's weights and, under half precision, half parameters; each a {@link Suggestion#MORE_GPUS}. Stateless.
 */
final class ScaleOut {

    private ScaleOut() {
    }

    static List<Suggestion> plans(ResolvedRun r, Costs base) {
        List<Suggestion> out = new ArrayList<>();
        List<String> weightsOptions = new ArrayList<>(List.of(r.weights()));
        if (r.half() && !r.weights().equals("mixed") && !r.trainable().lora()) {
            weightsOptions.add("mixed");
        }
        for (int stage = Math.max(2, r.zero()); stage <= 3; stage++) {
            for (String weights : weightsOptions) {
                Suggestion plan = fewestGpus(r, base, stage, weights);
                if (plan != null) {
                    out.add(plan);
                }
            }
        }
        return out;
    }

    private static Suggestion fewestGpus(ResolvedRun r, Costs base, int stage, String weights) {
        // From the power of two at or above twice the run's GPUs.
        for (int gpus = Math.max(8, Integer.highestOneBit(r.gpus() * 2 - 1) << 1); gpus <= 512; gpus *= 2) {
            int count = gpus;
            ResolvedRun changed = r.with(b -> {
                b.gpus = count;
                b.zero = stage;
                b.weights = weights;
            });
            Costs c = Costs.of(changed, changed.batch());
            if (c.peakBytes() > r.gpu().memoryBytes()) {
                continue;
            }
            boolean sameWeights = weights.equals(r.weights());
            List<String> flags = new ArrayList<>(List.of("--gpus " + gpus, "--zero " + stage));
            if (!sameWeights) {
                flags.add("--weights " + weights);
            }
            long saves = base.peakBytes() - c.peakBytes();
            String text = "adds " + (gpus - r.gpus()) + " GPUs: train on " + gpus + " GPUs with ZeRO stage " + stage
                    + (sameWeights ? "" : " and " + weights + " weights") + " (" + String.join(" ", flags) + "): "
                    + Plans.describeChange(base, c, saves) + ", " + gb(c.peakBytes()) + " per GPU";
            return new Suggestion(text, saves, c.peakBytes(), c.stepSeconds(), Suggestion.MORE_GPUS, flags,
                    gpus - r.gpus(), true, (gpus - r.gpus()) + " more GPUs");
        }
        return null;
    }
}
