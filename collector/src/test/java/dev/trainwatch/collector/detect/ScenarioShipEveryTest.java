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
 * Every trace again as an agent with {@code --ship-every 5s} sends it (five seconds of readings and step reports per
 * batch; events, NaN losses, hardware slowdowns and a rank's first two starved step reports at once, the polls of
 * ten seconds after the first of those one by one): the same kinds are raised — every quiet trace stays quiet — without
 * flapping, and each at most two batches and a tick later than with a batch a second (a finding waits for the batch
 * that carries its readings; a sustain that runs out between two batches is seen when the next one comes, or at the
 * idle judgement). The latencies go to target/detection-latency-ship-every-5s.md (docs/DETECTORS.md quotes them);
 * {@code -Dtrainwatch.shipEvery=10} plays every trace at another interval (target/detection-latency-ship-every-10s.md,
 * docs/DETECTORS.md quotes it; docs/PERFORMANCE.md gives the command).
 */
class ScenarioShipEveryTest {

    static final int SHIP_EVERY = Integer.getInteger("trainwatch.shipEvery", 5);
    private static final Map<String, String> LATENCIES = new TreeMap<>();

    static java.util.stream.Stream<String> traces() throws Exception {
        return ScenarioTest.traces();
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("traces")
    void theSameKindsAtMostTwoBatchesAndATickLater(String name) {
        Scenario scenario = Scenario.load(name);
        Result every = new ScenarioPlayer().play(scenario);
        Result batched = new ScenarioPlayer(SHIP_EVERY).play(Scenario.load(name));
        List<AnomalyKind> expected = ScenarioTest.expectedKinds(scenario);
        ScenarioTest.assertExactlyWithoutFlapping(name, batched, expected);
        for (AnomalyKind kind : expected) {
            double oneSecond = every.latency(kind);
            double fiveSeconds = batched.latency(kind);
            assertThat(fiveSeconds).as(name + " → " + kind + " (a batch a second: " + oneSecond + " s)")
                    .isLessThanOrEqualTo(oneSecond + 2 * SHIP_EVERY + 1);
            if (kind == AnomalyKind.DATA_STARVATION && name.endsWith("-starved-after-healthy")
                    || kind == AnomalyKind.OOM_RISK && name.equals("bucket-oom")) {
                // The agent sends a report that turns starved at once and the polls after it one by one, and a report
                // of a larger bucket at once: named as soon as with a batch a second.
                assertThat(fiveSeconds).as(name + " → " + kind + " (a batch a second: " + oneSecond + " s)")
                        .isLessThanOrEqualTo(oneSecond);
            }
            synchronized (LATENCIES) {
                LATENCIES.put(name + " → " + kind.wireName(), String.format(Locale.ROOT, "%.0f s | %.0f s",
                        oneSecond, fiveSeconds));
            }
        }
    }

    @AfterAll
    static void writeLatencies() throws IOException {
        StringBuilder b = new StringBuilder("| scenario → kind | a batch a second | --ship-every " + SHIP_EVERY + "s |\n")
                .append("|---|---|---|\n");
        LATENCIES.forEach((k, v) -> b.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        Path out = Path.of("target", "detection-latency-ship-every-" + SHIP_EVERY + "s.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, b.toString());
    }
}
