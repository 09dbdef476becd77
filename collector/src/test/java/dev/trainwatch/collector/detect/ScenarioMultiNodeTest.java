package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.ScenarioPlayer.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Every trace again with the run's GPUs on two nodes, each with its own agent sending {@code --ship-every 10s}
 * batches at its own moment (the second node five seconds after the first) and the log read on the first: the
 * collector then judges the run on each node's arrival at most every 5 s (urgent input at once), and sees each node's
 * readings up to 10 s late. The same kinds are raised, every quiet trace stays quiet, nothing flaps, and each at most
 * two batches, the spacing and a tick later than with one node sending every second. The latencies go to
 * target/detection-latency-two-nodes-10s.md ({@code -Dtrainwatch.shipEvery} plays another interval,
 * {@code -Dtrainwatch.nodes} more nodes: a trace is split over at most one node per GPU).
 */
class ScenarioMultiNodeTest {

    static final int SHIP_EVERY = Integer.getInteger("trainwatch.shipEvery", 10);
    static final int NODES = Integer.getInteger("trainwatch.nodes", 2);
    private static final Map<String, String> LATENCIES = new TreeMap<>();

    static java.util.stream.Stream<String> traces() throws Exception {
        return ScenarioTest.traces();
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("traces")
    void theSameKindsOnTwoNodes(String name) {
        Scenario scenario = Scenario.load(name);
        Result every = new ScenarioPlayer().play(scenario);
        Result twoNodes = new ScenarioPlayer(SHIP_EVERY, NODES).play(Scenario.load(name));
        // The collector saw one run on every node (at most one GPU each), each GPU on its own node.
        int nodes = Math.min(NODES, scenario.gpus());
        assertThat(twoNodes.fleet().run(ScenarioPlayer.RUN)).get().extracting(v -> v.hosts().size()).isEqualTo(nodes);
        assertThat(twoNodes.fleet().gpus().stream().map(g -> g.host()).distinct()).hasSize(nodes);
        List<AnomalyKind> expected = ScenarioTest.expectedKinds(scenario);
        ScenarioTest.assertExactlyWithoutFlapping(name, twoNodes, expected);
        for (AnomalyKind kind : expected) {
            double oneSecond = every.latency(kind);
            double latency = twoNodes.latency(kind);
            assertThat(latency).as(name + " → " + kind + " (one node, a batch a second: " + oneSecond + " s)")
                    .isLessThanOrEqualTo(oneSecond + 2 * SHIP_EVERY + 5 + 1);
            // What the agents send at once is judged at once, whatever the run's spacing: a hardware slowdown, a run
            // turning data-starved after a healthy stretch, a larger bucket, a NaN loss, an XID.
            if (kind == AnomalyKind.THROTTLING || kind == AnomalyKind.DATA_STARVATION
                    && name.endsWith("-starved-after-healthy") || kind == AnomalyKind.OOM_RISK
                    && name.equals("bucket-oom")) {
                assertThat(latency).as(name + " → " + kind + " (one node, a batch a second: " + oneSecond + " s)")
                        .isLessThanOrEqualTo(oneSecond);
            } else if (kind == AnomalyKind.LOSS_NONFINITE || kind == AnomalyKind.XID_ERROR) {
                assertThat(latency).as(name + " → " + kind + " (one node, a batch a second: " + oneSecond + " s)")
                        .isLessThanOrEqualTo(oneSecond + 1);
            }
            synchronized (LATENCIES) {
                LATENCIES.put(name + " → " + kind.wireName(), String.format(Locale.ROOT, "%.0f s | %.0f s",
                        oneSecond, latency));
            }
        }
    }

    @AfterAll
    static void writeLatencies() throws IOException {
        StringBuilder b = new StringBuilder("| scenario → kind | one node, a batch a second | " + NODES
                + " nodes, --ship-every " + SHIP_EVERY + "s |\n").append("|---|---|---|\n");
        LATENCIES.forEach((k, v) -> b.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        Path out = Path.of("target", "detection-latency-" + (NODES == 2 ? "two" : Integer.toString(NODES))
                + "-nodes-" + SHIP_EVERY + "s.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, b.toString());
    }
}
