package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.detect.AnomalyKind;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.integration.RuleFiles.Rule;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus rules in {@code alerts/}: valid for the real promtool, unit-tested by it (every alert both
 * firing and staying quiet, every recording rule evaluated), and written to the project's conventions.
 */
class AlertRulesIT {
    // The anomaly kinds of the collector's contract (docs/ALERTS.md lists the alert for each).
    private static final List<String> ANOMALY_KINDS = List.of("oom_risk", "memory_above_estimate",
            "data_starvation", "step_time_above_estimate", "gpu_underutilized", "gpu_idle", "throttling",
            "straggler", "stalled", "xid_error", "agent_lost", "loss_nonfinite", "loss_spike", "run_failed", "host_memory",
            "spec_mismatch");
    private static final Set<String> SEVERITIES = Set.of("critical", "warning", "info");
    private static final Pattern TEMPLATE_QUERY = Pattern.compile("(?:printf|query)\\s+\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Duration PROMTOOL_TIMEOUT = Duration.ofMinutes(2);

    @Test
    void promtoolAcceptsEveryRuleFile() {
        Path promtool = ExternalCommand.require("promtool", "prometheus");
        List<String> command = new ArrayList<>(List.of(promtool.toString(), "check", "rules"));
        ProjectFiles.ruleFiles().forEach(p -> command.add(p.toString()));
        assertThat(ProjectFiles.ruleFiles()).as("rule files in alerts/").isNotEmpty();

        ExternalCommand.Result result = ExternalCommand.run(PROMTOOL_TIMEOUT, ProjectFiles.root(), command);

        assertEquals(0, result.exitCode(), () -> "promtool check rules failed:\n" + result.output());
    }

    @Test
    void promtoolUnitTestsOfTheRulesPass() {
        Path promtool = ExternalCommand.require("promtool", "prometheus");
        List<String> command = new ArrayList<>(List.of(promtool.toString(), "test", "rules"));
        ProjectFiles.ruleTestFiles().forEach(p -> command.add(p.getFileName().toString()));
        assertThat(ProjectFiles.ruleTestFiles()).as("promtool test files in alerts/tests/").isNotEmpty();

        // Test files name their rule files relative to themselves: run from their directory.
        ExternalCommand.Result result =
                ExternalCommand.run(PROMTOOL_TIMEOUT, ProjectFiles.alertsDir().resolve("tests"), command);

        assertEquals(0, result.exitCode(), () -> "promtool test rules failed:\n" + result.output());
        assertThat(result.output()).doesNotContain("FAILED");
    }

    @Test
    void everyAlertHasAUnitTestWhereItFiresAndOneWhereItStaysQuiet() {
        Set<String> fires = new HashSet<>();
        Set<String> quiet = new HashSet<>();
        for (Path file : ProjectFiles.ruleTestFiles()) {
            for (JsonNode test : RuleFiles.readYaml(file).path("tests")) {
                for (JsonNode check : test.path("alert_rule_test")) {
                    String name = check.path("alertname").asText();
                    if (check.path("exp_alerts").isEmpty()) {
                        quiet.add(name);
                    } else {
                        fires.add(name);
                    }
                }
            }
        }
        List<String> alerts = RuleFiles.alerts().stream().map(Rule::name).toList();
        assertThat(alerts.stream().filter(a -> !fires.contains(a)))
                .as("alerts without a promtool case where they fire").isEmpty();
        assertThat(alerts.stream().filter(a -> !quiet.contains(a)))
                .as("alerts without a promtool case where they stay quiet").isEmpty();
        assertThat(fires.stream().filter(a -> !alerts.contains(a)))
                .as("promtool cases for alerts that do not exist").isEmpty();
    }

    @Test
    void everyRecordingRuleIsEvaluatedByAUnitTest() {
        Set<String> tested = new HashSet<>();
        for (Path file : ProjectFiles.ruleTestFiles()) {
            for (JsonNode test : RuleFiles.readYaml(file).path("tests")) {
                for (JsonNode check : test.path("promql_expr_test")) {
                    tested.addAll(PromqlNames.metricNames(check.path("expr").asText()));
                }
            }
        }
        assertThat(RuleFiles.recordedNames().stream().filter(r -> !tested.contains(r)))
                .as("recording rules without a promql_expr_test").isEmpty();
    }

    @Test
    void everyAlertCarriesSeveritySummaryDescriptionAndARunbookSection() {
        Set<String> anchors = MarkdownAnchors.of(ProjectFiles.read(ProjectFiles.docs("ALERTS.md")));
        // The docs describe the links the rules carry, not a placeholder host to sed away.
        assertThat(ProjectFiles.read(ProjectFiles.docs("ALERTS.md"))).doesNotContain("trainwatch.example/docs");
        for (Rule alert : RuleFiles.alerts()) {
            String severity = alert.labels().get("severity");
            if (severity == null) {
                // Anomaly routing rules pass the collector's severity through from the series.
                assertThat(alert.expr()).as(alert.name() + ": no severity label and none kept from the series")
                        .containsPattern("by \\([^)]*severity[^)]*\\)");
            } else {
                assertThat(SEVERITIES).as(alert.name() + " severity").contains(severity);
            }
            assertThat(alert.annotations().get("summary")).as(alert.name() + " summary").isNotBlank();
            assertThat(alert.annotations().get("description")).as(alert.name() + " description").isNotBlank();
            String runbook = alert.annotations().get("runbook_url");
            assertThat(runbook).as(alert.name() + " runbook_url").contains("/docs/ALERTS.md#");
            String anchor = runbook.substring(runbook.indexOf('#') + 1);
            assertThat(anchor).as(alert.name() + " runbook anchor").isEqualTo(alert.name().toLowerCase(Locale.ROOT));
            assertThat(anchors).as(alert.name() + ": docs/ALERTS.md has no section #" + anchor).contains(anchor);
            // The link opens the shipped docs on a collector (or the configured trainwatch_url), never a placeholder.
            assertThat(runbook).as(alert.name() + " runbook_url").doesNotContain("example")
                    .startsWith("{{ with $externalLabels.trainwatch_url }}{{ . }}{{ else }}");
            if (alert.expr().contains("trainwatch_run_anomaly")) {
                // A run alert leads to the run's page (evidence, the collector's fix), not to GET /v1/runs JSON.
                assertThat(alert.annotations().get("run_page")).as(alert.name() + " run_page")
                        .endsWith("/#/runs/{{ $labels.run_id }}");
                assertThat(alert.annotations().get("description")).doesNotContain("/v1/runs");
            }
        }
    }

    @Test
    void alertNamesAreUnique() {
        Map<String, Integer> counts = new HashMap<>();
        RuleFiles.rules().forEach(r -> counts.merge(r.name(), 1, Integer::sum));
        assertThat(counts).as("rules defined twice").allSatisfy((name, n) -> assertThat(n).as(name).isOne());
    }

    @Test
    void everyAnomalyKindHasItsOwnRoutingAlert() {
        // The list above is every kind the collector raises.
        assertThat(ANOMALY_KINDS).containsExactlyInAnyOrderElementsOf(java.util.Arrays.stream(AnomalyKind.values())
                .map(AnomalyKind::wireName).toList());
        for (String kind : ANOMALY_KINDS) {
            assertThat(RuleFiles.alerts()).as("alert routing anomaly kind " + kind)
                    .anySatisfy(a -> assertThat(a.expr()).contains("kind=\"" + kind + "\""));
        }
        // ... and the catch-all excludes exactly these, so a new kind reaches someone too.
        Rule catchAll = RuleFiles.alerts().stream().filter(a -> a.name().equals("TrainwatchRunAnomaly"))
                .findFirst().orElseThrow();
        assertThat(catchAll.expr()).contains("kind!~\"" + String.join("|", ANOMALY_KINDS) + "\"");
    }

    @Test
    void xidRulesClassifyXidsAsTheCollectorDoes() {
        DetectorSettings.XidError collector = DetectorSettings.defaults().xidError();
        assertThat(xidsMatchedBy("TrainwatchGpuXidCritical")).isEqualTo(new TreeSet<>(collector.critical()));
        assertThat(xidsMatchedBy("TrainwatchGpuXidContained")).isEqualTo(new TreeSet<>(collector.warning()));
        assertThat(xidsMatchedBy("TrainwatchGpuXidApplication")).isEqualTo(new TreeSet<>(collector.application()));
        assertThat(xidsMatchedBy("TrainwatchGpuXidInformational"))
                .isEqualTo(new TreeSet<>(collector.informational()));
        // The catch-all excludes exactly the classified ones.
        Set<Long> classified = new TreeSet<>();
        Stream.of(collector.critical(), collector.warning(), collector.application(), collector.informational())
                .forEach(classified::addAll);
        assertThat(xidsMatchedBy("TrainwatchGpuXidOther")).isEqualTo(classified);
    }

    /** The XID numbers in an alert's kind matcher (the first kind=~ or kind= or kind!~ of its expression). */
    private static Set<Long> xidsMatchedBy(String alertName) {
        Rule rule = RuleFiles.alerts().stream().filter(a -> a.name().equals(alertName)).findFirst().orElseThrow();
        Matcher m = Pattern.compile("kind(?:=~|!~|=)\"([0-9|]+)\"").matcher(rule.expr());
        assertThat(m.find()).as(alertName + " has a kind matcher").isTrue();
        Set<Long> xids = new TreeSet<>();
        for (String n : m.group(1).split("\\|")) {
            xids.add(Long.parseLong(n));
        }
        return xids;
    }

    @Test
    void anomalyAlertsFireWithinTwoMinutesAtTheDefaultScrapeInterval() {
        // 15 s scrape + 15 s evaluation + `for`: at most a minute of `for` keeps the total under two minutes.
        for (Rule alert : RuleFiles.alerts()) {
            if (alert.expr().contains("trainwatch_run_anomaly")) {
                assertThat(alert.forDuration()).as(alert.name() + " for").isIn("30s", "1m", "0s", null);
            }
        }
    }

    @Test
    void rulesUseOnlyMetricsOfTheContractOrRecordedByTheRules() {
        Set<String> known = new LinkedHashSet<>(MetricContract.load().seriesNames());
        known.addAll(RuleFiles.recordedNames());
        for (Rule rule : RuleFiles.rules()) {
            Set<String> used = new LinkedHashSet<>(PromqlNames.metricNames(rule.expr()));
            Stream.of(rule.annotations().values(), rule.labels().values()).flatMap(java.util.Collection::stream)
                    .forEach(text -> {
                        Matcher m = TEMPLATE_QUERY.matcher(text);
                        while (m.find()) {
                            used.addAll(PromqlNames.metricNames(m.group(1)));
                        }
                    });
            assertThat(known).as(rule.name() + " uses metrics missing from docs/METRICS.md").containsAll(used);
        }
    }
}
