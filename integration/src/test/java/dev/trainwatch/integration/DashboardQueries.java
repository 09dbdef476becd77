package dev.trainwatch.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Every PromQL expression of the Grafana dashboards: panel targets and the variables' label_values queries. */
final class DashboardQueries {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LABEL_VALUES = Pattern.compile("^label_values\\((.*),\\s*[A-Za-z_][A-Za-z0-9_]*\\)$");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{(\\w+)}|\\$(\\w+)");

    /** One query: where it is (dashboard, panel, refId or variable name) and its expression as written. */
    record Query(String dashboard, String panel, String ref, String expr) {
        String where() {
            return dashboard + " / " + panel + " / " + ref;
        }
    }

    private DashboardQueries() {}

    static JsonNode read(Path dashboard) {
        try {
            return JSON.readTree(dashboard.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot parse " + dashboard, e);
        }
    }

    static List<Query> all() {
        List<Query> queries = new ArrayList<>();
        for (Path file : ProjectFiles.dashboards()) {
            queries.addAll(of(read(file)));
        }
        return queries;
    }

    static List<Query> of(JsonNode dashboard) {
        String title = dashboard.path("title").asText();
        List<Query> queries = new ArrayList<>();
        for (JsonNode panel : panels(dashboard)) {
            for (JsonNode target : panel.path("targets")) {
                queries.add(new Query(title, panel.path("title").asText(), target.path("refId").asText(),
                        target.path("expr").asText()));
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (variable.path("type").asText().equals("query")) {
                String definition = variable.path("definition").asText();
                Matcher m = LABEL_VALUES.matcher(definition.strip());
                // label_values(selector, label) is Grafana's, not PromQL; its selector is.
                queries.add(new Query(title, "variable $" + variable.path("name").asText(), "definition",
                        m.matches() ? m.group(1).strip() : definition));
            }
        }
        return queries;
    }

    /** All panels, including those nested in collapsed rows. */
    static List<JsonNode> panels(JsonNode dashboard) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            out.add(panel);
            panel.path("panels").forEach(out::add);
        }
        return out;
    }

    /**
     * The expression with Grafana's template variables replaced as Grafana would ({@code $var} and
     * {@code ${var}}). A variable missing from {@code values} is an error: the dashboard uses something the test
     * does not know how to fill in.
     */
    static String substitute(String expr, Map<String, String> values) {
        Matcher m = VARIABLE.matcher(expr);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name = m.group(1) != null ? m.group(1) : m.group(2);
            String value = values.get(name);
            if (value == null) {
                throw new IllegalArgumentException("unknown template variable $" + name + " in: " + expr);
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }
}
