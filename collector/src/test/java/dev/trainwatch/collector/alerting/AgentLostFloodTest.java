package dev.trainwatch.collector.alerting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A flood of junk runs on one node whose agent falls silent is one aggregated {@code agent_lost} line in the log, not
 * one per run; a few runs still get a line each.
 */
@Timeout(30)
class AgentLostFloodTest {

    private static AlertNotice lost(String run) {
        return new AlertNotice(run, "agent_lost", "warning", Instant.parse("2026-11-22T08:00:00Z"), null,
                "no data from the agent on node-9 for 35 s (it reports every 1 s)", "check the agent on node-9",
                Map.of("hosts", List.of("node-9")), null, false);
    }

    @Test
    void fiveHundredElevenLostRunsAreOneLine() {
        List<String> lines = new CopyOnWriteArrayList<>();
        List<AlertNotice> flood = new ArrayList<>();
        for (int i = 0; i < 511; i++) {
            flood.add(lost("junk-" + i));
        }
        AlertDispatcher dispatcher = new AlertDispatcher(List.of(new LogSink(lines::add, null)),
                AlertDispatcher.Settings.defaults(), Clock.systemUTC(), line -> { });
        List<String> outcomes = new CopyOnWriteArrayList<>();
        try {
            dispatcher.onOutcome(outcomes::add);
            // What the fleet's tick raises at once is queued at once.
            flood.forEach(dispatcher::publish);
            await().atMost(Duration.ofSeconds(20)).until(() -> outcomes.size() == 511);
        } finally {
            dispatcher.close();
        }
        // The delivery thread may take the first few notices before the rest are queued (each such batch of up to six
        // is told run by run); everything after is aggregated. Every run is told once, in a handful of lines.
        assertThat(lines).hasSizeLessThanOrEqualTo(10);
        int told = 0;
        for (String line : lines) {
            Matcher many = Pattern.compile("runs=(\\d+)").matcher(line);
            told += many.find() ? Integer.parseInt(many.group(1)) : 1;
        }
        assertThat(told).isEqualTo(511);
        assertThat(String.join("\n", lines)).contains("agent_lost runs=", "junk-0", "more", "node-9");
    }

    @Test
    void aFewRunsGetALineEach() {
        List<String> lines = new ArrayList<>();
        new LogSink(lines::add, null).deliver(List.of(lost("a"), lost("b")));
        assertThat(lines).hasSize(2).allSatisfy(line -> assertThat(line).contains("agent_lost run="));
        lines.clear();
        new LogSink(lines::add, null).deliver(List.of(lost("a"), lost("b"), lost("c"), lost("d"), lost("e"), lost("f"),
                lost("g")));
        assertThat(lines).singleElement().asString().contains("runs=7 (a, b, c, d, e and 2 more)");
    }
}
