package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.integration.DashboardQueries.Query;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * End to end with the real things: the collector (in-process, on a free port) fed a scenario through its public
 * HTTP API, a real Prometheus scraping it every second with the project's rules, a real Alertmanager receiving
 * from Prometheus. A sick two-node run's alerts fire in Prometheus and arrive at Alertmanager, the recording
 * rules aggregate it across both nodes, and every dashboard query returns data; a healthy run fires nothing.
 *
 * <p>The rules are a test copy with `for:` cut to 1 s ({@link LoopbackStack#shortenedRules}); thresholds and
 * expressions are the shipped ones. Time-based detectors of the collector that need minutes of evidence
 * (data starvation, stalled, straggler) are covered by the collector's own scenario tests, not here.
 */
@Execution(ExecutionMode.CONCURRENT) // waits for scrapes and rule evaluations: runs beside the other tests
class PrometheusEndToEndIT {
    /** A run the estimator says fits on an A100 80 GB; the scenarios vary what is observed, not the spec. */
    private static final Map<String, Object> SPEC = Map.of("model", "pixart-sigma-xl-2", "gpu", "a100-80gb",
            "gpus", 2, "batch", 32, "resolution", 1024, "precision", "bf16", "optimizer", "came",
            "grad_checkpointing", true, "features", "precomputed", "total_steps", 100_000);
    private static final int SAMPLES_PER_STEP = 64;

    /** What a run at 99.5% of GPU memory with repeated XID 79 on one GPU must raise. */
    private static final Set<String> SICK_ALERTS = Set.of("TrainwatchRunOomRisk", "TrainwatchRunXidError",
            "TrainwatchGpuXidCritical", "TrainwatchRunMemoryHeadroomLow", "TrainwatchGpuMemoryNearlyFull");

    @TempDir
    Path dir;

    @Test
    void sickRunAlertsFireInPrometheusReachAlertmanagerAndEveryDashboardQueryReturnsData() throws Exception {
        try (CollectorServer collector = startCollector();
             ScenarioFeeder feeder = new ScenarioFeeder(collector.uri());
             LoopbackStack stack = LoopbackStack.start(dir, "127.0.0.1:" + collector.port())) {
            JsonNode run = feeder.putSpec("e2e-sick", SPEC);
            long start = System.nanoTime();
            long[] anomalySeen = {0};
            feeder.play(new ScenarioFeeder.Run("e2e-sick", "e2e-node-sick", 2, 0.995, 0.9, 0.05, List.of(), 79, 4,
                    true), run.path("estimate"), SAMPLES_PER_STEP);
            // The run's second node: its own agent, same run id, less busy GPUs.
            feeder.play(new ScenarioFeeder.Run("e2e-sick", "e2e-node-sick-2", 2, 0.7, 0.6, 0.05, List.of(), 0, 0,
                    false), run.path("estimate"), SAMPLES_PER_STEP);

            awaitOrFail("the sick run's alerts firing in Prometheus", Duration.ofSeconds(120), stack, feeder, () -> {
                if (anomalySeen[0] == 0 && !stack.query("trainwatch_run_anomaly{kind=\"oom_risk\"} == 1").isEmpty()) {
                    anomalySeen[0] = System.nanoTime();
                }
                Set<String> firing = alertNames(stack.prometheusAlerts(), "firing");
                return firing.containsAll(SICK_ALERTS) ? null
                        : "firing " + firing + ", expected at least " + SICK_ALERTS + "; all: " + stack.prometheusAlerts();
            });
            long firing = System.nanoTime();
            awaitOrFail("the sick run's alerts arriving at Alertmanager", Duration.ofSeconds(30), stack, feeder, () -> {
                Set<String> received = alertNames(stack.alertmanagerAlerts(), null);
                return received.containsAll(SICK_ALERTS) ? null
                        : "Alertmanager has " + received + ", expected at least " + SICK_ALERTS;
            });
            long received = System.nanoTime();
            // Measured figures for docs/PERFORMANCE.md (surefire keeps them in the test's -output.txt).
            System.out.printf("e2e latency: oom_risk scraped as raised %.1f s after the first batch; all %d alerts "
                            + "firing %.1f s, at Alertmanager %.1f s (1 s scrape/evaluation, for: 1s)%n",
                    seconds(start, anomalySeen[0]), SICK_ALERTS.size(), seconds(start, firing), seconds(start, received));
            // The notification carries the figures and the way out, not just a name.
            JsonNode oom = find(stack.alertmanagerAlerts(), "TrainwatchRunOomRisk");
            assertThat(oom.path("labels").path("severity").asText()).isIn("warning", "critical");
            assertThat(oom.path("labels").path("run_id").asText()).isEqualTo("e2e-sick");
            assertThat(oom.path("annotations").path("description").asText())
                    .startsWith("Run e2e-sick has ").containsPattern("[0-9.]+[KMG]iB left on its fullest GPU")
                    .doesNotContain("unknown");
            // Links open on the collector that reported the run: its page for the run, its shipped runbook.
            String collectorBase = "http://127.0.0.1:" + collector.port();
            assertThat(oom.path("annotations").path("run_page").asText()).isEqualTo(collectorBase + "/#/runs/e2e-sick");
            String runbook = oom.path("annotations").path("runbook_url").asText();
            assertThat(runbook).isEqualTo(collectorBase + "/docs/ALERTS.md#trainwatchrunoomrisk");
            java.net.http.HttpResponse<String> doc = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(runbook)).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(doc.statusCode()).isEqualTo(200);
            assertThat(doc.body()).contains("id=\"trainwatchrunoomrisk\"");
            JsonNode xid = find(stack.alertmanagerAlerts(), "TrainwatchGpuXidCritical");
            assertThat(xid.path("labels").path("kind").asText()).isEqualTo("79");
            assertThat(xid.path("labels").path("host").asText()).isEqualTo("e2e-node-sick");

            Map<String, String> values = new HashMap<>(DashboardsTest.PARSE_VALUES);
            values.putAll(Map.of("run", "e2e-sick", "host", ".*", "__rate_interval", "5s", "__interval", "1s"));
            List<Query> queries = DashboardQueries.all();
            awaitOrFail("every dashboard query returning data", Duration.ofSeconds(60), stack, feeder, () -> {
                Map<String, String> empty = new LinkedHashMap<>();
                for (Query q : queries) {
                    String expr = DashboardQueries.substitute(q.expr(), values);
                    if (stack.query(expr).isEmpty()) {
                        empty.put(q.where(), expr);
                    }
                }
                return empty.isEmpty() ? null : empty.size() + " of " + queries.size() + " queries without data: " + empty;
            });
            // Per-run aggregation across nodes, in the real Prometheus over the real collector's series.
            assertThat(value(stack, "run_id:trainwatch_gpus:count{run_id=\"e2e-sick\"}")).isEqualTo(4);
            assertThat(value(stack, "run_id:trainwatch_gpu_utilization_ratio:min{run_id=\"e2e-sick\"}"))
                    .isCloseTo(0.6, within(1e-9));
            assertThat(value(stack, "count(count by (host) (trainwatch_gpu_run_info{run_id=\"e2e-sick\"}))"))
                    .isEqualTo(2);
            assertThat(feeder.errors()).as("requests the collector refused").isEmpty();
        }
    }

    private static double value(LoopbackStack stack, String expr) {
        JsonNode result = stack.query(expr);
        assertThat(result).as(expr).hasSize(1);
        return result.get(0).path("value").get(1).asDouble();
    }

    @Test
    void healthyRunFiresNothing() throws Exception {
        try (CollectorServer collector = startCollector();
             ScenarioFeeder feeder = new ScenarioFeeder(collector.uri());
             LoopbackStack stack = LoopbackStack.start(dir, "127.0.0.1:" + collector.port())) {
            // The largest per-GPU batch the estimator says fits with room to spare: a healthy run by its own measure.
            JsonNode estimate = null;
            double predictedShare = Double.NaN;
            for (int batch : new int[] {32, 16, 8, 4, 2, 1}) {
                Map<String, Object> spec = new HashMap<>(SPEC);
                spec.put("batch", batch);
                estimate = feeder.putSpec("e2e-healthy", spec).path("estimate");
                predictedShare = estimate.path("peak_memory_bytes").asDouble() / estimate.path("gpu_memory_bytes").asDouble();
                if (predictedShare <= 0.85) {
                    break;
                }
            }
            assertThat(predictedShare).as("a spec that fits with room to spare").isBetween(0.05, 0.85);
            // Observed as predicted: memory at the estimate, busy GPUs, little data wait, steps at the estimated pace.
            feeder.play(new ScenarioFeeder.Run("e2e-healthy", "e2e-node-healthy", 2, predictedShare, 0.95, 0.02,
                    List.of(), 0, 0, true), estimate, SAMPLES_PER_STEP);

            // Twenty scrapes and rule evaluations over the run's data; with `for: 1s` anything that would fire has.
            awaitOrFail("20 s of the healthy run in Prometheus, with recording rules over it", Duration.ofSeconds(90),
                    stack, feeder, () -> {
                        JsonNode samples = stack.query("count_over_time(trainwatch_gpu_utilization_ratio{host=\"e2e-node-healthy\", gpu=\"0\"}[1m])");
                        boolean enough = !samples.isEmpty() && samples.get(0).path("value").get(1).asDouble() >= 20;
                        boolean recorded = !stack.query("run_id:trainwatch_run_step_seconds:mean5m{run_id=\"e2e-healthy\"}").isEmpty();
                        return enough && recorded ? null : "samples so far: " + samples + ", recorded: " + recorded;
                    });

            assertThat(stack.prometheusAlerts()).as("alerts (pending or firing) for a healthy run").isEmpty();
            assertThat(stack.query("trainwatch_run_anomaly == 1")).as("anomalies the collector raised").isEmpty();
            assertThat(stack.alertmanagerAlerts()).as("alerts at Alertmanager").isEmpty();
            assertThat(feeder.errors()).as("requests the collector refused").isEmpty();
        }
    }

    private static double seconds(long from, long to) {
        return to == 0 ? Double.NaN : (to - from) / 1e9;
    }

    private static CollectorServer startCollector() {
        // With a price per GPU-hour, so the cost panels have data too.
        return CollectorServer.start(CollectorConfig.defaults().withListen("127.0.0.1", 0)
                .withGpuHourPrices(dev.trainwatch.collector.state.GpuHourPrices.parse("2.5")), List.of());
    }

    /** Alert names in a Prometheus or Alertmanager alert list, optionally only those in {@code state}. */
    private static Set<String> alertNames(JsonNode alerts, String state) {
        Set<String> names = new TreeSet<>();
        for (JsonNode alert : alerts) {
            if (state == null || state.equals(alert.path("state").asText())) {
                names.add(alert.path("labels").path("alertname").asText());
            }
        }
        return names;
    }

    private static JsonNode find(JsonNode alerts, String name) {
        for (JsonNode alert : alerts) {
            if (alert.path("labels").path("alertname").asText().equals(name)) {
                return alert;
            }
        }
        return fail("no alert " + name + " in " + alerts);
    }

    /** Polls {@code problem} (null when satisfied) until satisfied or {@code atMost}; fails with the last problem. */
    private static void awaitOrFail(String what, Duration atMost, LoopbackStack stack, ScenarioFeeder feeder,
                                    Supplier<String> problem) {
        List<String> last = new ArrayList<>(List.of("not checked yet"));
        try {
            await(what).atMost(atMost).pollInterval(Duration.ofMillis(500)).until(() -> {
                String p = problem.get();
                last.set(0, String.valueOf(p));
                return p == null;
            });
        } catch (ConditionTimeoutException e) {
            fail("timed out after " + atMost.toSeconds() + " s waiting for " + what + ": " + last.get(0)
                    + "\nfeeder errors: " + feeder.errors() + "\n" + stack.logs());
        }
    }
}
