package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Past one node, as DEPLOY.md describes it: one 24-GPU run on three nodes of 8, one node's GPUs throttled to 70% of
 * their clock. Per-node layout (three collectors, each fed by its node's agent) and central layout (one collector
 * for all three) are scraped by a real Prometheus with the shipped rules, and must give the same answers: the
 * run's 24 GPUs, its throughput, its slowest reporter's step time, and TrainwatchRunSlowNode naming the slow node.
 * Neither layout gives any single collector the whole picture in the per-node case; only PromQL does.
 */
class ManyNodesIT {
    private static final Map<String, Object> SPEC = Map.of("model", "pixart-sigma-xl-2", "gpu", "a100-80gb",
            "gpus", 24, "batch", 8, "resolution", 1024, "precision", "bf16", "optimizer", "came",
            "grad_checkpointing", true, "features", "precomputed", "total_steps", 100_000);
    private static final int SAMPLES_PER_STEP = 8 * 24;
    private static final List<String> NODES = List.of("node-a", "node-b", "node-c");
    private static final String SLOW = "node-c";

    @TempDir
    Path dir;

    private static CollectorServer collector() {
        return CollectorServer.start(CollectorConfig.defaults().withListen("127.0.0.1", 0), List.of());
    }

    @Test
    void perNodeCollectorsAndOneCentralCollectorGiveTheSameRunWideAnswers() throws Exception {
        List<CollectorServer> perNode = new ArrayList<>();
        List<ScenarioFeeder> feeders = new ArrayList<>();
        try {
            for (int i = 0; i < NODES.size(); i++) {
                perNode.add(collector());
            }
            List<String> targets = perNode.stream().map(c -> "127.0.0.1:" + c.port()).toList();
            try (LoopbackStack stack = LoopbackStack.start(java.nio.file.Files.createDirectories(dir.resolve("per-node")), targets)) {
                for (int i = 0; i < NODES.size(); i++) {
                    ScenarioFeeder feeder = new ScenarioFeeder(perNode.get(i).uri());
                    feeders.add(feeder);
                    play(feeder, "multi-pernode", NODES.get(i));
                }
                checkRunWideAnswers(stack, "multi-pernode", feeders);
                // No single collector saw more than its own node's 8 GPUs of the run.
                for (CollectorServer c : perNode) {
                    assertThat(c.fleet().run("multi-pernode").orElseThrow().gpus()).hasSize(8);
                }
            }
        } finally {
            feeders.forEach(ScenarioFeeder::close);
            perNode.forEach(CollectorServer::close);
        }

        List<ScenarioFeeder> centralFeeders = new ArrayList<>();
        try (CollectorServer central = collector();
             LoopbackStack stack = LoopbackStack.start(java.nio.file.Files.createDirectories(dir.resolve("central")), "127.0.0.1:" + central.port())) {
            for (String node : NODES) {
                ScenarioFeeder feeder = new ScenarioFeeder(central.uri());
                centralFeeders.add(feeder);
                play(feeder, "multi-central", node);
            }
            checkRunWideAnswers(stack, "multi-central", centralFeeders);
            assertThat(central.fleet().run("multi-central").orElseThrow().gpus()).hasSize(24);
        } finally {
            centralFeeders.forEach(ScenarioFeeder::close);
        }
    }

    private static void play(ScenarioFeeder feeder, String runId, String node) throws Exception {
        JsonNode estimate = feeder.putSpec(runId, SPEC).path("estimate");
        boolean slow = node.equals(SLOW);
        // Every node reports the run's steps (each node's agent tails its ranks' log); the slow node's GPUs are in
        // thermal slowdown, which the feeder plays as 70% of the maximum SM clock.
        feeder.play(new ScenarioFeeder.Run(runId, node, 8, 0.6, slow ? 0.99 : 0.8, 0.02,
                slow ? List.of("hw_thermal_slowdown") : List.of(), 0, 0, true), estimate, SAMPLES_PER_STEP);
    }

    private static void checkRunWideAnswers(LoopbackStack stack, String runId, List<ScenarioFeeder> feeders) {
        String run = "{run_id=\"" + runId + "\"}";
        await("run-wide answers for " + runId).atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1))
                .untilAsserted(() -> {
                    assertThat(value(stack, "run_id:trainwatch_gpus:count" + run)).isEqualTo(24);
                    assertThat(stack.query("run_id:trainwatch_run_samples_per_second:max" + run)).isNotEmpty();
                    assertThat(stack.query("run_id:trainwatch_run_step_seconds:slowest_mean5m" + run)).isNotEmpty();
                    JsonNode slowNode = stack.prometheusAlerts();
                    assertThat(slowNodeAlerts(slowNode, runId)).as("TrainwatchRunSlowNode: " + slowNode)
                            .containsExactly(SLOW);
                });
        // The run's throughput is its samples per step over its step time, whichever collector reports it.
        double step = value(stack, "max(trainwatch_run_predicted_step_seconds" + run + ")");
        assertThat(value(stack, "run_id:trainwatch_run_samples_per_second:max" + run))
                .isCloseTo(SAMPLES_PER_STEP / step, within(SAMPLES_PER_STEP / step * 0.05));
        assertThat(value(stack, "run_id:trainwatch_run_step_seconds:slowest_mean5m" + run))
                .isCloseTo(step, within(step * 0.05));
        // The slow node is the one at 70% of the fastest node's clock; the others keep pace.
        assertThat(value(stack, "run_id_host:trainwatch_gpu_sm_clock:avg_ratio{run_id=\"" + runId + "\",host=\""
                + SLOW + "\"}")).isCloseTo(0.7, within(0.01));
        assertThat(feeders.stream().flatMap(f -> f.errors().stream()).toList()).as("requests refused").isEmpty();
    }

    private static List<String> slowNodeAlerts(JsonNode alerts, String runId) {
        List<String> hosts = new ArrayList<>();
        for (JsonNode alert : alerts) {
            JsonNode labels = alert.path("labels");
            if (labels.path("alertname").asText().equals("TrainwatchRunSlowNode")
                    && labels.path("run_id").asText().equals(runId) && alert.path("state").asText().equals("firing")) {
                hosts.add(labels.path("host").asText());
            }
        }
        return hosts;
    }

    private static double value(LoopbackStack stack, String expr) {
        JsonNode result = stack.query(expr);
        assertThat(result).as(expr).hasSize(1);
        return result.get(0).path("value").get(1).asDouble();
    }
}
