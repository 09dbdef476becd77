package dev.trainwatch.estimator;

import static dev.trainwatch.estimator.Units.gb;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The advice as a plan, each step re-priced. A run that fits gets the single changes that help, most memory saved
 * first. One that does not: the single changes that make it fit (least {@link Lever#effort}, then fastest), else the
 * smallest combination that fits, then the other helping changes, then the plans with more GPUs ({@code more_gpus}).
 */
final class Plans {

    /** Changes a combination holds at most: beyond that the advice is to change the plan, not the flags. */
    private static final int MAX_COMBINED = 4;
    /** Options per slot tried in combinations (the ones saving most memory). */
    private static final int OPTIONS_PER_SLOT = 2;
    /** Combinations priced at most per estimate (each costs a re-pricing; estimates stay well under 1 ms). */
    private static final int MAX_PRICED = 160;

    private record Priced(Lever lever, Costs costs) {
    }

    private static final Comparator<Priced> LEAST_MEMORY = Comparator.comparingLong((Priced p) -> p.costs.peakBytes())
            .thenComparingDouble(p -> p.costs.stepSeconds());

    private Plans() {
    }

    static List<Suggestion> suggestions(ResolvedRun r, Costs base, int maxBatch) {
        long capacity = r.gpu().memoryBytes();
        List<Priced> helping = new ArrayList<>();
        for (Lever lever : Levers.candidates(r, maxBatch)) {
            ResolvedRun changed = r.with(lever.edit());
            Costs c = Costs.of(changed, changed.batch());
            boolean faster = c.stepSeconds() < base.stepSeconds() * 0.99;
            if (c.peakBytes() < base.peakBytes() || faster) {
                helping.add(new Priced(lever, c));
            }
        }
        List<Suggestion> out = new ArrayList<>();
        if (base.peakBytes() <= capacity) {
            helping.sort(LEAST_MEMORY);
            helping.forEach(p -> out.add(single(p, base, r, false)));
            return List.copyOf(out);
        }
        // What fits alone: the change that leaves most of the user's recipe as it is first, then the fastest.
        List<Priced> fitting = helping.stream().filter(p -> p.costs.peakBytes() <= capacity)
                .sorted(Comparator.comparingInt((Priced p) -> p.lever.effort())
                        .thenComparingDouble(p -> p.costs.stepSeconds())).toList();
        fitting.forEach(p -> out.add(single(p, base, r, true)));
        if (fitting.isEmpty()) {
            Suggestion combined = combination(r, base, helping);
            if (combined != null) {
                out.add(combined);
            }
        }
        helping.stream().filter(p -> p.costs.peakBytes() > capacity)
                .sorted(LEAST_MEMORY).forEach(p -> out.add(single(p, base, r, false)));
        out.addAll(ScaleOut.plans(r, base));
        return List.copyOf(out);
    }

    private static Suggestion single(Priced p, Costs base, ResolvedRun r, boolean saysFit) {
        long saves = base.peakBytes() - p.costs.peakBytes();
        String detail = describeChange(base, p.costs, saves);
        if (saysFit) {
            detail += ", fits in " + of(p.costs.peakBytes(), r);
        }
        return new Suggestion(p.lever.change() + " (" + p.lever.flag() + "): " + detail, saves, p.costs.peakBytes(),
                p.costs.stepSeconds(), Suggestion.SINGLE, List.of(flagOnly(p.lever)), 0,
                p.costs.peakBytes() <= r.gpu().memoryBytes(), p.lever.givesUp());
    }

    /**
     * The smallest set of levers (one per slot) that fits: fewest changes, then fastest. Candidates: the best
     * {@value #OPTIONS_PER_SLOT} savers of each slot; a set whose savings fall well short is not priced.
     */
    private static Suggestion combination(ResolvedRun r, Costs base, List<Priced> helping) {
        long capacity = r.gpu().memoryBytes();
        long missing = base.peakBytes() - capacity;
        Map<String, List<Priced>> bySlot = new LinkedHashMap<>();
        helping.stream().filter(p -> p.costs.peakBytes() < base.peakBytes())
                .sorted(Comparator.comparingLong((Priced p) -> p.costs.peakBytes()))
                .forEach(p -> {
                    List<Priced> options = bySlot.computeIfAbsent(p.lever.slot(), k -> new ArrayList<>());
                    if (options.size() < OPTIONS_PER_SLOT) {
                        options.add(p);
                    }
                });
        List<List<Priced>> slots = new ArrayList<>(bySlot.values());
        int[] budget = {MAX_PRICED};
        for (int size = 2; size <= Math.min(MAX_COMBINED, slots.size()); size++) {
            Best best = new Best();
            search(r, base, slots, 0, size, new ArrayList<>(), missing, capacity, budget, best);
            if (best.levers != null) {
                return combined(r, base, best.levers, best.costs);
            }
        }
        return null;
    }

    private static final class Best {
        List<Lever> levers;
        Costs costs;
        int effort;
    }

    private static void search(ResolvedRun r, Costs base, List<List<Priced>> slots, int from, int size,
                               List<Priced> chosen, long missing, long capacity, int[] budget, Best best) {
        if (chosen.size() == size) {
            long summed = chosen.stream().mapToLong(p -> base.peakBytes() - p.costs.peakBytes()).sum();
            // Savings overlap a little (activations and encoder transients share the peak): a margin, not a proof.
            if (summed < missing * 0.8 || budget[0]-- <= 0) {
                return;
            }
            List<Lever> levers = chosen.stream().map(Priced::lever).toList();
            ResolvedRun changed = r.with(b -> levers.forEach(lever -> lever.edit().accept(b)));
            Costs c = Costs.of(changed, changed.batch());
            int effort = levers.stream().mapToInt(Lever::effort).sum();
            if (c.peakBytes() <= capacity && (best.costs == null || effort < best.effort
                    || effort == best.effort && c.stepSeconds() < best.costs.stepSeconds())) {
                best.levers = levers;
                best.costs = c;
                best.effort = effort;
            }
            return;
        }
        for (int i = from; i <= slots.size() - (size - chosen.size()); i++) {
            for (Priced option : slots.get(i)) {
                chosen.add(option);
                search(r, base, slots, i + 1, size, chosen, missing, capacity, budget, best);
                chosen.remove(chosen.size() - 1);
            }
        }
    }

    private static Suggestion combined(ResolvedRun r, Costs base, List<Lever> levers, Costs c) {
        List<String> words = new ArrayList<>();
        List<String> flags = new ArrayList<>();
        List<String> givesUp = new ArrayList<>();
        for (Lever lever : levers) {
            words.add(lever.change());
            flags.add(flagOnly(lever));
            if (lever.givesUp() != null) {
                givesUp.add(lever.givesUp());
            }
        }
        long saves = base.peakBytes() - c.peakBytes();
        String gpus = r.gpus() == 1 ? "one GPU" : r.gpus() + " GPUs";
        String text = "no single change fits on " + gpus + "; together: " + joinWords(words) + " ("
                + String.join(" ", flags) + "): " + describeChange(base, c, saves) + ", fits in " + of(c.peakBytes(), r)
                + (givesUp.isEmpty() ? "" : "; gives up " + String.join("; ", givesUp));
        return new Suggestion(text, saves, c.peakBytes(), c.stepSeconds(), Suggestion.COMBINATION, flags, 0, true,
                givesUp.isEmpty() ? null : String.join("; ", givesUp));
    }

    /** The flags alone, without the explanation after a colon or semicolon ("--attention flash"). */
    private static String flagOnly(Lever lever) {
        return lever.flag().split("[:;]", 2)[0].strip();
    }

    private static String joinWords(List<String> words) {
        if (words.size() == 1) {
            return words.get(0);
        }
        return String.join(", ", words.subList(0, words.size() - 1)) + " and " + words.get(words.size() - 1);
    }

    /** "21.65 of 23.99 GiB". */
    static String of(long peak, ResolvedRun r) {
        double gib = 1L << 30;
        return String.format(Locale.ROOT, "%.2f of %.2f GiB", peak / gib, r.gpu().memoryBytes() / gib);
    }

    static String describeChange(Costs base, Costs changed, long saves) {
        List<String> parts = new ArrayList<>();
        if (saves > 0) {
            parts.add("saves " + gb(saves));
        } else if (saves < 0) {
            parts.add("costs " + gb(-saves) + " more");
        }
        double ratio = changed.stepSeconds() / base.stepSeconds();
        if (ratio < 0.99) {
            parts.add(String.format(Locale.ROOT, "%.0f%% less step time", (1 - ratio) * 100));
        } else if (ratio > 1.01) {
            parts.add(String.format(Locale.ROOT, "%.0f%% more step time", (ratio - 1) * 100));
        }
        return String.join(", ", parts);
    }
}
