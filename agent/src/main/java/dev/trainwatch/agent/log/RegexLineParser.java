package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A user's regex with named groups: {@code step} required; {@code time}, {@code rate}, {@code data_time},
 * {@code model_time}, {@code lm_time}, {@code vae_time}, {@code interval}, {@code samples}, {@code loss}, {@code lr},
 * {@code grad_norm}, {@code height}, {@code width}, {@code rank} optional, with or without underscores (Java group
 * names cannot hold {@code _}). Searched anywhere in the line.
 */
final class RegexLineParser implements StepLineParser {

    private static final Pattern GROUP_NAME = Pattern.compile("\\(\\?<([A-Za-z][A-Za-z0-9_]*)>");
    private static final Map<String, String> KNOWN = Stream.of("step", "time", "rate", "data_time", "model_time",
            "lm_time", "vae_time", "interval", "samples", "loss", "lr", "grad_norm", "height", "width", "rank")
            .collect(Collectors.toMap(name -> name.replace("_", "").toLowerCase(Locale.ROOT), name -> name));

    private final Matcher matcher;
    private final Map<String, String> groups = new LinkedHashMap<>();
    private final IntervalTracker intervals = new IntervalTracker();

    /** @throws IllegalArgumentException one line, when it does not compile or has no {@code step} group */
    RegexLineParser(String regex) {
        Matcher names = GROUP_NAME.matcher(regex);
        StringBuilder javaRegex = new StringBuilder();
        while (names.find()) {
            String given = names.group(1);
            String javaName = given.replace("_", "");
            String canonical = KNOWN.get(javaName.toLowerCase(Locale.ROOT));
            if (canonical != null) {
                groups.put(canonical, javaName);
            }
            names.appendReplacement(javaRegex, Matcher.quoteReplacement("(?<" + javaName + ">"));
        }
        names.appendTail(javaRegex);
        Pattern pattern;
        try {
            pattern = Pattern.compile(javaRegex.toString());
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("invalid log format regex: " + e.getDescription()
                    + (e.getIndex() >= 0 ? " near index " + e.getIndex() : "") + " in " + regex);
        }
        if (!groups.containsKey("step")) {
            throw new IllegalArgumentException(
                    "log format regex needs a named group (?<step>\\d+) for the step number: " + regex);
        }
        this.matcher = pattern.matcher("");
    }

    @Override
    public String name() {
        return "regex";
    }

    @Override
    public StepEvent parse(String line) {
        matcher.reset(line);
        if (!matcher.find()) {
            return null;
        }
        String stepText = group("step");
        long step = stepText == null ? -1 : LineFields.longAt(stepText.replace(",", ""), 0);
        if (step < 0) {
            return null;
        }
        Double time = number("time");
        if (time == null) {
            Double rate = number("rate");
            time = rate != null && rate > 0 ? 1.0 / rate : null;
        }
        Double interval = number("interval");
        long gap = intervals.observe(step);
        Integer intervalSteps = interval != null && interval >= 1 ? (Integer) (int) Math.min(interval, Integer.MAX_VALUE)
                : IntervalTracker.steps(gap);
        return new StepEvent(step, time, number("data_time"), number("model_time"), number("lm_time"),
                number("vae_time"), intervalSteps, number("samples"), reading("loss"), number("lr"),
                reading("grad_norm"), integer("height"), integer("width"), integer("rank"), null, null);
    }

    private String group(String canonical) {
        String javaName = groups.get(canonical);
        return javaName == null ? null : matcher.group(javaName);
    }

    private Double number(String canonical) {
        String text = group(canonical);
        return text == null ? null : LineFields.doubleAt(text.trim(), 0);
    }

    private Double reading(String canonical) {
        String text = group(canonical);
        return text == null ? null : LineFields.readingAt(text.trim(), 0);
    }

    private Integer integer(String canonical) {
        Double v = number(canonical);
        return v == null || v < 0 || v > Integer.MAX_VALUE ? null : (int) Math.round(v);
    }
}
