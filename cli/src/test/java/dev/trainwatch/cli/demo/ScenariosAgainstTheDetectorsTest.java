package dev.trainwatch.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.detect.Anomaly;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The bundled scenarios played into the collector's real {@link Fleet} (its real detectors and default thresholds)
 * over simulated time: each scenario must raise what it is meant to show, within the time the quick start promises,
 * and the healthy run must raise nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ScenariosAgainstTheDetectorsTest {

    private static final Instant START = Instant.parse("2026-11-22T08:00:00Z");

    /** Delivers straight into the fleet, as the HTTP edge does after decoding. */
    record FleetSink(Fleet fleet) implements DemoSink {
        @Override
        public void putSpec(String runId, RunSpec spec) {
            fleet.putSpec(runId, spec);
        }

        @Override
        public void postSteps(String runId, List<StepEvent> steps) {
            fleet.ingestSteps(runId, steps);
        }

        @Override
        public void postBatch(AgentBatch batch) {
            fleet.ingestBatch(batch);
        }
    }

    /** Active anomaly kinds per run after each simulated second, and when each kind first appeared. */
    private final Map<String, Map<String, Double>> firstRaised = new LinkedHashMap<>();
    private final Map<String, List<String>> activeAtEnd = new LinkedHashMap<>();
    private final Map<String, List<Anomaly>> anomaliesAtEnd = new LinkedHashMap<>();

    @BeforeAll
    void playEightMinutes() throws Exception {
        SettableClock clock = new SettableClock(START);
        Fleet fleet = Fleet.create(Estimator.bundled(), clock);
        List<Scenario> scenarios = Scenario.bundled(Estimator.bundled());
        scenarios.forEach(s -> fleet.markSynthetic(s.runId()));
        DemoFeed feed = new DemoFeed(scenarios, new FleetSink(fleet), 1.0, START);
        feed.begin();
        // Long enough for the slowest detector (gpu_underutilized wants five minutes of data, then two more).
        for (int second = 1; second <= 480; second++) {
            clock.advance(Duration.ofSeconds(1));
            feed.tick(clock.instant());
            fleet.tick();
            for (RunView run : fleet.runs()) {
                for (Anomaly a : run.anomalies()) {
                    if (a.active()) {
                        firstRaised.computeIfAbsent(run.runId(), k -> new LinkedHashMap<>())
                                .putIfAbsent(a.kind().wireName(), (double) second);
                    }
                }
            }
        }
        for (RunView run : fleet.runs()) {
            assertThat(run.synthetic()).isTrue();
            activeAtEnd.put(run.runId(), run.anomalies().stream().filter(Anomaly::active)
                    .map(a -> a.kind().wireName()).toList());
            anomaliesAtEnd.put(run.runId(), run.anomalies().stream().filter(Anomaly::active).toList());
        }
    }

    private Map<String, Double> raised(String runId) {
        return firstRaised.getOrDefault(runId, Map.of());
    }

    @Test
    void theHealthyDitRunRaisesNothing() {
        assertThat(raised(HealthyDitScenario.RUN_ID)).isEmpty();
    }

    @Test
    void pixartSigmaIsStarvedForDataWithinAboutAMinute() {
        assertThat(raised(StarvedPixArtSigmaScenario.RUN_ID)).containsKey("data_starvation");
        assertThat(raised(StarvedPixArtSigmaScenario.RUN_ID).get("data_starvation")).isLessThanOrEqualTo(75);
        assertThat(activeAtEnd.get(StarvedPixArtSigmaScenario.RUN_ID)).contains("data_starvation");
    }

    @Test
    void eachRunTellsOneStory() {
        // Issue 44: no two anomalies of a run carry the same paragraph, and a headline does not name a cause its
        // own fix then contradicts (data time "includes the online encoding" above "encoding is 2% of it").
        for (Map.Entry<String, List<Anomaly>> run : anomaliesAtEnd.entrySet()) {
            List<String> suggestions = run.getValue().stream().map(Anomaly::suggestion).toList();
            assertThat(suggestions).as(run.getKey()).doesNotHaveDuplicates();
            List<String> messages = run.getValue().stream().map(Anomaly::message).toList();
            assertThat(messages).as(run.getKey()).doesNotHaveDuplicates();
        }
        Anomaly starved = anomaliesAtEnd.get(StarvedPixArtSigmaScenario.RUN_ID).stream()
                .filter(a -> a.kind().wireName().equals("data_starvation")).findFirst().orElseThrow();
        if (starved.suggestion().startsWith("make the input pipeline faster")) {
            assertThat(starved.message()).contains("mostly waiting for the loader").doesNotContain("which includes");
        }
        anomaliesAtEnd.get(StarvedPixArtSigmaScenario.RUN_ID).stream()
                .filter(a -> a.kind().wireName().equals("step_time_above_estimate"))
                .forEach(a -> assertThat(a.suggestion()).contains("see data_starvation"));
    }

    /**
     * QUICKSTART's table says when each demo run raises each kind ("data_starvation (after about 70 s)"); issue 44
     * found them 2–3× off. Each stated time is within a quarter (or 15 s) of what the scenarios raise here.
     */
    @Test
    void quickstartsDetectionTimesAreWhatTheDemoShows() throws Exception {
        String quickstart = Files.readString(Path.of("..", "docs", "QUICKSTART.md"));
        Pattern row = Pattern.compile("^\\| `(demo-[^`]+)` \\|.*\\| ([^|]+) \\|$");
        Pattern kind = Pattern.compile(
                "`([a-z_]+)` \\((?:after )?about (\\d+) (s|min)\\)");
        int checked = 0;
        List<String> off = new ArrayList<>();
        for (String line : quickstart.lines().toList()) {
            Matcher r = row.matcher(line);
            if (!r.matches()) {
                continue;
            }
            Matcher k = kind.matcher(r.group(2));
            while (k.find()) {
                double stated = Double.parseDouble(k.group(2)) * (k.group(3).equals("min") ? 60 : 1);
                Double measured = raised(r.group(1)).get(k.group(1));
                assertThat(measured).as(r.group(1) + " " + k.group(1)).isNotNull();
                if (Math.abs(measured - stated) > Math.max(15, 0.25 * measured)) {
                    off.add(String.format(Locale.ROOT, "%s %s: QUICKSTART about %.0f s, the demo %.0f s",
                            r.group(1), k.group(1), stated, measured));
                }
                checked++;
            }
        }
        assertThat(off).as("QUICKSTART's detection times").isEmpty();
        assertThat(checked).as("QUICKSTART's times checked").isGreaterThanOrEqualTo(6);
    }

    @Test
    void sanaIsHeadingForOomWithinAboutAMinute() {
        assertThat(raised(CreepingSanaScenario.RUN_ID)).containsKey("oom_risk");
        assertThat(raised(CreepingSanaScenario.RUN_ID).get("oom_risk")).isLessThanOrEqualTo(75);
        assertThat(raised(CreepingSanaScenario.RUN_ID)).containsKey("memory_above_estimate");
        assertThat(activeAtEnd.get(CreepingSanaScenario.RUN_ID)).contains("oom_risk");
    }

    @Test
    void theEightGpuRunHasAThrottledStraggler() {
        assertThat(raised(ThrottledStragglerScenario.RUN_ID)).doesNotContainKey("gpu_underutilized");
        assertThat(raised(ThrottledStragglerScenario.RUN_ID)).containsKey("throttling");
        assertThat(raised(ThrottledStragglerScenario.RUN_ID).get("throttling")).isLessThanOrEqualTo(75);
        assertThat(raised(ThrottledStragglerScenario.RUN_ID)).containsKey("straggler");
        assertThat(activeAtEnd.get(ThrottledStragglerScenario.RUN_ID)).contains("throttling", "straggler");
    }

    @Test
    void theFluxLoraOnA24GbCardRaisesNothing() {
        assertThat(raised(FluxLoraScenario.RUN_ID)).isEmpty();
        assertThat(activeAtEnd).containsKey(FluxLoraScenario.RUN_ID);
    }

    @Test
    void noDemoRunRaisesAKindItsStoryDoesNotTell() {
        // Each run's story names what it shows; anything else on the page would be a false alarm in the demo.
        Map<String, java.util.Set<String>> allowed = Map.of(
                HealthyDitScenario.RUN_ID, java.util.Set.of(),
                StarvedPixArtSigmaScenario.RUN_ID, java.util.Set.of("data_starvation", "step_time_above_estimate"),
                CreepingSanaScenario.RUN_ID, java.util.Set.of("oom_risk", "memory_above_estimate"),
                ThrottledStragglerScenario.RUN_ID, java.util.Set.of("throttling", "straggler"),
                FluxLoraScenario.RUN_ID, java.util.Set.of());
        assertThat(firstRaised.keySet()).as("runs that raised anything: " + firstRaised)
                .isSubsetOf(allowed.keySet());
        firstRaised.forEach((run, kinds) -> assertThat(kinds.keySet()).as(run + " raised " + kinds)
                .isSubsetOf(allowed.get(run)));
    }
}
