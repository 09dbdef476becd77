package dev.trainwatch.integration;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Pulls the metric names out of a PromQL expression, well enough to check them against the contract: string
 * literals and label matchers are removed first, so only selectors' names, function names, keywords and label
 * lists of by()/on() remain; of those, names that mention trainwatch or contain a colon (recording rules) are
 * metric names by the project's conventions. promtool does the real parsing; this only finds the names.
 */
final class PromqlNames {
    private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`");
    private static final Pattern MATCHERS = Pattern.compile("\\{[^{}]*}");
    private static final Pattern IDENTIFIER = Pattern.compile("(?<![A-Za-z0-9_:.])[A-Za-z_:][A-Za-z0-9_:]*");

    private PromqlNames() {}

    static Set<String> metricNames(String expr) {
        String stripped = MATCHERS.matcher(STRING.matcher(expr).replaceAll("\"\"")).replaceAll("{}");
        Set<String> names = new LinkedHashSet<>();
        Matcher m = IDENTIFIER.matcher(stripped);
        while (m.find()) {
            String token = m.group();
            if (token.contains("trainwatch") || token.contains(":")) {
                names.add(token);
            }
        }
        return names;
    }
}
