package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.trainwatch.integration.DashboardQueries.Query;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboards in {@code dashboards/}: every query is PromQL the real promtool accepts, uses only
 * metrics of the contract (docs/METRICS.md) or of the recording rules, and each dashboard shows what it promises.
 */
class DashboardsTest {
    // What Grafana puts in for the variables; any syntactically valid value will do for parsing.
    static final Map<String, String> PARSE_VALUES = Map.of("run", "some-run", "host", ".*",
            "__rate_interval", "1m", "__interval", "15s", "__range", "1h", "datasource", "prometheus");

    @TempDir
    Path dir;

    @Test
    void everyQueryIsValidPromql() throws IOException {
        Path promtool = ExternalCommand.require("promtool", "prometheus");
        List<Query> queries = DashboardQueries.all();
        assertThat(queries).hasSizeGreaterThan(30);

        // promtool has no "check expression"; a recording rule per query gets each one parsed and type-checked
        // (a range vector where an instant one is needed fails too). Names point back at the panel.
        ObjectNode doc = RuleFiles.YAML.createObjectNode();
        ArrayNode rules = doc.putArray("groups").addObject().put("name", "dashboard-queries").putArray("rules");
        StringBuilder index = new StringBuilder();
        for (int i = 0; i < queries.size(); i++) {
            Query q = queries.get(i);
            rules.addObject().put("record", "dashboard_query_" + i)
                    .put("expr", DashboardQueries.substitute(q.expr(), PARSE_VALUES));
            index.append("dashboard_query_").append(i).append(" = ").append(q.where()).append('\n');
        }
        Path file = dir.resolve("dashboard-queries.rules.yml");
        RuleFiles.YAML.writeValue(file.toFile(), doc);

        ExternalCommand.Result result = ExternalCommand.run(Duration.ofMinutes(1), dir,
                List.of(promtool.toString(), "check", "rules", file.toString()));

        assertEquals(0, result.exitCode(), () -> "promtool rejected a dashboard query:\n" + result.output()
                + "\nqueries:\n" + index);
    }

    @Test
    void everyQueryUsesOnlyContractOrRecordedMetrics() {
        Set<String> known = new LinkedHashSet<>(MetricContract.load().seriesNames());
        known.addAll(RuleFiles.recordedNames());
        for (Query q : DashboardQueries.all()) {
            Set<String> used = PromqlNames.metricNames(q.expr());
            assertThat(known).as(q.where() + " uses metrics missing from docs/METRICS.md: " + q.expr())
                    .containsAll(used);
        }
    }

    /**
     * Both layouts (docs/DEPLOY.md, "Scaling past one machine"): the GPU series come from the collector or from each
     * node's agent (job trainwatch-agent), so no query of a node series picks a job or an instance, and the
     * collector's own panels (targets, scrapes) leave the agents' job out.
     */
    @Test
    void gpuPanelsReadEitherLayoutAndCollectorPanelsLeaveTheAgentsOut() {
        for (Query q : DashboardQueries.all()) {
            if (q.expr().contains("trainwatch_gpu_") || q.expr().contains("trainwatch_host_")) {
                assertThat(q.expr()).as(q.dashboard() + " / " + q.panel()).doesNotContain("job=")
                        .doesNotContain("instance=");
            }
            if (q.expr().contains("job=~\"trainwatch.*\"")) {
                assertThat(q.expr()).as(q.dashboard() + " / " + q.panel()).contains("job!=\"trainwatch-agent\"");
            }
        }
    }

    @Test
    void panelsUseTheDatasourceVariableAndHaveUniqueIds() {
        Set<String> uids = new HashSet<>();
        for (Path file : ProjectFiles.dashboards()) {
            JsonNode dashboard = DashboardQueries.read(file);
            String title = dashboard.path("title").asText();
            assertThat(uids.add(dashboard.path("uid").asText())).as(title + " uid unique").isTrue();
            assertThat(variables(dashboard)).as(title + " variables").contains("datasource");
            Set<Integer> ids = new HashSet<>();
            for (JsonNode panel : DashboardQueries.panels(dashboard)) {
                assertThat(ids.add(panel.path("id").asInt())).as(title + " panel id " + panel.path("id")).isTrue();
                if (panel.path("type").asText().equals("row")) {
                    continue;
                }
                assertThat(panel.path("datasource").path("uid").asText())
                        .as(title + " / " + panel.path("title").asText() + " datasource").isEqualTo("${datasource}");
                assertThat(panel.path("targets")).as(title + " / " + panel.path("title").asText() + " targets")
                        .isNotEmpty();
                assertThat(panel.path("description").asText()).as(title + " / " + panel.path("title") + " description")
                        .isNotBlank();
            }
        }
    }

    @Test
    void trainingRunDashboardShowsWhatItPromises() {
        JsonNode run = dashboard("trainwatch-run");
        assertThat(variables(run)).contains("datasource", "run", "host");
        assertThat(metricsOf(run)).contains("trainwatch_run_predicted_peak_memory_bytes",
                "trainwatch_run_peak_memory_bytes", "trainwatch_run_predicted_step_seconds",
                "trainwatch_run_step_seconds", "trainwatch_gpu_utilization_ratio", "host_gpu:trainwatch_gpu_idle:ratio",
                "trainwatch_run_data_wait_ratio", "run_id:trainwatch_run_samples_per_second:max",
                "trainwatch_run_eta_seconds", "trainwatch_run_anomaly", "trainwatch_gpu_sm_clock_hertz",
                "trainwatch_gpu_clock_event_active", "trainwatch_gpu_power_watts", "trainwatch_gpu_temperature_celsius");
    }

    @Test
    void fleetDashboardShowsWhatItPromises() {
        assertThat(metricsOf(dashboard("trainwatch-fleet"))).contains("host_gpu:trainwatch_gpu_idle:ratio",
                "fleet:trainwatch_gpu_underused_in_runs:gpus", "host_gpu:trainwatch_gpu_memory_used:ratio",
                "trainwatch_gpu_clock_event_active", "trainwatch_gpu_xid_errors_total");
    }

    @Test
    void healthDashboardShowsWhatItPromises() {
        assertThat(metricsOf(dashboard("trainwatch-health"))).contains(
                "trainwatch_agent_last_seen_timestamp_seconds", "trainwatch_agent_poll_duration_seconds",
                "trainwatch_ingest_requests_total", "trainwatch_agent_spool_depth_batches");
    }

    private static JsonNode dashboard(String uid) {
        return ProjectFiles.dashboards().stream().map(DashboardQueries::read)
                .filter(d -> d.path("uid").asText().equals(uid)).findFirst()
                .orElseThrow(() -> new AssertionError("no dashboard with uid " + uid + " in dashboards/"));
    }

    private static Set<String> variables(JsonNode dashboard) {
        Set<String> names = new LinkedHashSet<>();
        dashboard.path("templating").path("list").forEach(v -> names.add(v.path("name").asText()));
        return names;
    }

    private static Set<String> metricsOf(JsonNode dashboard) {
        return DashboardQueries.of(dashboard).stream().flatMap(q -> PromqlNames.metricNames(q.expr()).stream())
                .collect(Collectors.toSet());
    }
}
