package dev.trainwatch.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The project's Prometheus rule files and promtool test files, read as data. */
final class RuleFiles {
    static final YAMLMapper YAML = new YAMLMapper();

    /** One rule as written: an alert (name = alert) or a recording rule (name = record). */
    record Rule(Path file, String group, String name, boolean alert, String expr, String forDuration,
                Map<String, String> labels, Map<String, String> annotations) {}

    private RuleFiles() {}

    static JsonNode readYaml(Path file) {
        try {
            return YAML.readTree(file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot parse " + file, e);
        }
    }

    static List<Rule> rules() {
        List<Rule> rules = new ArrayList<>();
        for (Path file : ProjectFiles.ruleFiles()) {
            for (JsonNode group : readYaml(file).path("groups")) {
                for (JsonNode rule : group.path("rules")) {
                    boolean alert = rule.has("alert");
                    rules.add(new Rule(file, group.path("name").asText(),
                            alert ? rule.path("alert").asText() : rule.path("record").asText(), alert,
                            rule.path("expr").asText(), rule.path("for").asText(null),
                            strings(rule.path("labels")), strings(rule.path("annotations"))));
                }
            }
        }
        return rules;
    }

    static List<Rule> alerts() {
        return rules().stream().filter(Rule::alert).toList();
    }

    static List<Rule> recordingRules() {
        return rules().stream().filter(r -> !r.alert()).toList();
    }

    /** Names of the recorded series, which dashboards may use as well as the contract's names. */
    static Set<String> recordedNames() {
        Set<String> names = new LinkedHashSet<>();
        recordingRules().forEach(r -> names.add(r.name()));
        return names;
    }

    private static Map<String, String> strings(JsonNode node) {
        Map<String, String> out = new TreeMap<>();
        node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }
}
