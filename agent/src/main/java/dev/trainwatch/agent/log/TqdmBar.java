package dev.trainwatch.agent.log;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One frame of a tqdm bar in its default layout: {@code {desc}: {pct}%|{bar}| {n}/{total} [{elapsed}<{remaining},
 * {rate}{s/it|it/s}, {postfix}]}, or {@code {desc}: {n}it [...]} without a total. {@code total} is -1 when unknown,
 * {@code secondsPerIter} null before the first rate.
 */
record TqdmBar(String desc, long n, long total, Double secondsPerIter, Map<String, String> postfix) {
    private record Rate(int unit, Double secondsPerIter) {
    }

    private record Counter(long n, long total, int descLimit) {
    }

    static TqdmBar parse(String s) {
        Rate rate = rate(s);
        int open = rate == null ? -1 : s.lastIndexOf('[', rate.unit());
        Counter counter = open <= 0 ? null : counter(s, open);
        if (counter == null) {
            return null;
        }
        int colon = s.lastIndexOf(':', counter.descLimit());
        String desc = colon > 0 ? s.substring(0, colon).trim() : "";
        Map<String, String> postfix = Map.of();
        int after = rate.unit() + 4;
        if (after < s.length() && s.charAt(after) == ',') {
            int close = s.lastIndexOf(']');
            if (close > after) {
                postfix = parsePostfix(s.substring(after + 1, close));
            }
        }
        return new TqdmBar(desc, counter.n(), counter.total(), rate.secondsPerIter(), postfix);
    }

    private static Rate rate(String s) {
        int sit = s.indexOf("s/it");
        int its = s.indexOf("it/s");
        boolean secondsPer = sit >= 0 && (its < 0 || sit < its);
        int unit = secondsPer ? sit : its;
        if (unit < 0) {
            return null;
        }
        int numStart = unit;
        while (numStart > 0 && (LineFields.isDigit(s.charAt(numStart - 1)) || s.charAt(numStart - 1) == '.')) {
            numStart--;
        }
        if (numStart == unit) {
            return numStart > 0 && s.charAt(numStart - 1) == '?' ? new Rate(unit, null) : null;
        }
        double rate;
        try {
            rate = Double.parseDouble(s.substring(numStart, unit));
        } catch (NumberFormatException e) {
            return null;
        }
        return new Rate(unit, rate > 0 ? (secondsPer ? rate : 1.0 / rate) : null);
    }

    /** After the bar itself ({@code %|…|}), so "12/100 [" in prose does not count; or {@code nit}. */
    private static Counter counter(String s, int open) {
        int tokenEnd = open;
        while (tokenEnd > 0 && s.charAt(tokenEnd - 1) == ' ') {
            tokenEnd--;
        }
        int tokenStart = s.lastIndexOf(' ', tokenEnd - 1) + 1;
        int nEnd = LineFields.digitsEnd(s, tokenStart);
        if (tokenStart >= tokenEnd || nEnd == tokenStart) {
            return null;
        }
        long n = LineFields.longAt(s, tokenStart);
        if (nEnd < tokenEnd && s.charAt(nEnd) == '/') {
            long total = LineFields.longAt(s, nEnd + 1);
            int barEnd = s.lastIndexOf('|', tokenStart);
            int pct = barEnd < 0 ? -1 : s.lastIndexOf("%|", barEnd);
            if (total < 0 || LineFields.digitsEnd(s, nEnd + 1) != tokenEnd || pct < 0) {
                return null;
            }
            return new Counter(n, total, pct);
        }
        return s.startsWith("it", nEnd) && nEnd + 2 == tokenEnd ? new Counter(n, -1, tokenStart) : null;
    }

    /** {@code set_postfix(**kw)} pairs, or a string postfix as ai-toolkit's {@code lr: 1.0e-04 loss: 5.226e-01}. */
    private static Map<String, String> parsePostfix(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String part : text.split(",")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                out.put(part.substring(0, eq).trim(), part.substring(eq + 1).trim());
            } else {
                colonPairs(part, out);
            }
        }
        return out;
    }

    private static void colonPairs(String part, Map<String, String> out) {
        String[] tokens = part.trim().split("\\s+");
        for (int i = 0; i + 1 < tokens.length; i++) {
            String key = tokens[i];
            if (key.length() > 1 && key.endsWith(":")) {
                out.put(key.substring(0, key.length() - 1), tokens[i + 1]);
                i++;
            }
        }
    }

    Double number(String key) {
        String v = postfix.get(key);
        return v == null ? null : LineFields.doubleAt(v, 0);
    }

    Double reading(String key) {
        String v = postfix.get(key);
        return v == null ? null : LineFields.readingAt(v, 0);
    }

    Double firstReading(String... keys) {
        return Arrays.stream(keys).map(this::reading).filter(Objects::nonNull).findFirst().orElse(null);
    }

    /** The usual keys, else finetrainers' {@code global_avg_loss}, else any key naming a loss but not a maximum. */
    Double loss() {
        Double v = firstReading("loss", "step_loss", "train_loss", "avg_loss", "avr_loss", "global_avg_loss");
        return v != null ? v : postfix.keySet().stream().filter(k -> k.contains("loss") && !k.contains("max"))
                .findFirst().map(this::reading).orElse(null);
    }

    boolean reportsLoss() {
        return postfix.keySet().stream().anyMatch(k -> k.contains("loss"));
    }
}
