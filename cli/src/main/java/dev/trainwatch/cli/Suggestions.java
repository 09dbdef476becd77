package dev.trainwatch.cli;

import dev.trainwatch.estimator.catalog.Catalog;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** "Did you mean …": the known names a few edits away from what was typed, or extending it. Pure. */
public final class Suggestions {

    private Suggestions() {
    }

    /** The closest candidates, best first, at most {@code max}; empty when none is close. */
    public static List<String> closest(String typed, Collection<String> candidates, int max) {
        String t = typed.toLowerCase(Locale.ROOT);
        int allowed = Math.max(2, t.replace("-", "").length() / 3);
        List<Close> close = new ArrayList<>();
        for (String c : candidates) {
            String lc = c.toLowerCase(Locale.ROOT);
            int d = Catalog.distance(t, lc);
            boolean extends_ = lc.length() >= 3 && (t.startsWith(lc) || lc.startsWith(t)) && !t.equals(lc);
            if (d <= allowed || extends_) {
                close.add(new Close(c, extends_ ? Math.min(d, 1) : d));
            }
        }
        return close.stream().sorted(Comparator.comparingInt(Close::distance).thenComparing(Close::name))
                .limit(max).map(Close::name).toList();
    }

    private record Close(String name, int distance) {
    }

    /** {@code "; did you mean X?"} (or {@code X or Y}), or the empty string when nothing is close. */
    public static String didYouMean(String typed, Collection<String> candidates) {
        List<String> close = closest(typed, candidates, 2);
        return close.isEmpty() ? "" : "; did you mean " + String.join(" or ", close) + "?";
    }
}
