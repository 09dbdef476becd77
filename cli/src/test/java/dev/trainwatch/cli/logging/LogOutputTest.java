package dev.trainwatch.cli.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.protocol.testing.SettableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

/** One-line records, JSON records, and a flood that stays a few lines while every record is still counted. */
class LogOutputTest {
    private static final Instant T0 = Instant.parse("2026-11-24T04:40:01.123Z");

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final SettableClock clock = new SettableClock(T0);

    private LogOutput output(LogFormat format) {
        LogOutput output = new LogOutput(new PrintStream(bytes, true, StandardCharsets.UTF_8), format, clock, false);
        output.setLevel(Level.ALL);
        return output;
    }

    private List<String> lines() {
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static LogRecord record(Level level, String logger, String pattern, Object... params) {
        LogRecord record = new LogRecord(level, pattern);
        record.setLoggerName(logger);
        record.setParameters(params);
        record.setInstant(T0);
        return record;
    }

    @Test
    void aRecordIsOneLineWithTimeLevelComponentAndMessage() {
        LogOutput output = output(LogFormat.TEXT);
        output.publish(record(Level.WARNING, "dev.trainwatch.collector.state.Fleet",
                "run limit {0} reached: forgetting run {1}", 1024, "run-0"));
        LogRecord failed = record(Level.SEVERE, "dev.trainwatch.agent.Agent", "poll failed:\nsecond line");
        failed.setThrown(new IllegalStateException("NVML_ERROR_GPU_IS_LOST\n\tat somewhere"));
        output.publish(failed);

        assertThat(lines()).containsExactly(
                "2026-11-24T04:40:01.123Z WARN  collector.state.Fleet: run limit 1,024 reached: forgetting run run-0",
                "2026-11-24T04:40:01.123Z ERROR agent.Agent: poll failed: | second line"
                        + " (IllegalStateException: NVML_ERROR_GPU_IS_LOST |  at somewhere)");
    }

    @Test
    void jsonRecordsAreOneObjectPerLineWithTheFieldsShippersIndex() throws Exception {
        LogOutput output = output(LogFormat.JSON);
        output.publish(record(Level.INFO, "io.vertx.core.impl.BlockedThreadChecker", "Thread {0} blocked", "x"));
        List<String> lines = lines();
        assertEquals(1, lines.size());
        JsonNode node = new ObjectMapper().readTree(lines.get(0));
        assertEquals("2026-11-24T04:40:01.123Z", node.get("time").asText());
        assertEquals("INFO", node.get("level").asText());
        assertEquals("io.vertx.core.impl.BlockedThreadChecker", node.get("component").asText());
        assertEquals("Thread x blocked", node.get("message").asText());
        assertThat(node.has("repeated")).isFalse();
    }

    @Test
    void aFloodOfOneKindWritesOneLineThenOneCountPerMinute() throws Exception {
        LogOutput output = output(LogFormat.TEXT);
        for (int i = 0; i < 1_976; i++) {
            output.publish(record(Level.WARNING, "dev.trainwatch.collector.state.Fleet",
                    "run limit {0} reached: forgetting run {1}", 1024, "run-" + i));
        }
        assertThat(lines()).hasSize(1);
        output.writeExpired();
        assertThat(lines()).as("the minute is not over yet").hasSize(1);

        clock.advance(Duration.ofSeconds(61));
        output.writeExpired();
        List<String> lines = lines();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).contains("forgetting run run-1975")
                .endsWith("[1,975 records like this in the last minute; this is the last]");

        assertEquals(1_976, output.records("WARN"));
        assertEquals(1_975, output.suppressed("WARN"));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new LogMetrics(output).bindTo(registry);
        assertEquals(1_976, registry.get("trainwatch.log.records").tag("severity", "warning").functionCounter().count());
        assertEquals(1_975, registry.get("trainwatch.log.records.suppressed").tag("severity", "warning")
                .functionCounter().count());

        // After the interval the next record of the kind is written at once again.
        output.publish(record(Level.WARNING, "dev.trainwatch.collector.state.Fleet",
                "run limit {0} reached: forgetting run {1}", 1024, "run-2000"));
        assertThat(lines()).hasSize(3);
    }

    @Test
    void theTimerIsSetOnlyWhileACountIsHeldBackAndWritesItWhenItsIntervalEnds() {
        LogOutput output = new LogOutput(new PrintStream(bytes, true, StandardCharsets.UTF_8), LogFormat.TEXT, clock,
                true);
        output.setLevel(Level.ALL);
        try {
            output.publish(record(Level.WARNING, "dev.trainwatch.agent.Agent", "poll failed: {0}", "a"));
            output.publish(record(Level.INFO, "dev.trainwatch.agent.Agent", "collector reachable again"));
            assertThat(output.summarySet()).as("nothing held back: no timer").isFalse();

            clock.advance(Duration.ofSeconds(59).plusMillis(800));
            output.publish(record(Level.WARNING, "dev.trainwatch.agent.Agent", "poll failed: {0}", "b"));
            assertThat(output.summarySet()).as("a repeat held back sets the timer for its interval's end").isTrue();
            clock.advance(Duration.ofSeconds(2));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> lines().size() == 3);
            assertThat(lines().get(2)).contains("poll failed: b")
                    .endsWith("[1 records like this in the last minute; this is the last]");
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> !output.summarySet());
        } finally {
            output.close();
        }
        assertThat(lines()).hasSize(3);
    }

    @Test
    void differentKindsAreNotHeldBackByEachOther() {
        LogOutput output = output(LogFormat.TEXT);
        output.publish(record(Level.WARNING, "dev.trainwatch.collector.state.Fleet", "run limit {0} reached", 1));
        output.publish(record(Level.WARNING, "dev.trainwatch.collector.state.Fleet", "GPU limit {0} reached", 1));
        output.publish(record(Level.SEVERE, "dev.trainwatch.collector.state.Fleet", "run limit {0} reached", 1));
        assertThat(lines()).hasSize(3);
    }

    @Test
    void closingWritesWhatIsStillHeldBackSoNoCountIsLost() {
        LogOutput output = output(LogFormat.JSON);
        for (int i = 0; i < 3; i++) {
            output.publish(record(Level.WARNING, "dev.trainwatch.agent.ship.Spool", "spool full ({0} bytes)", i));
        }
        output.close();
        List<String> lines = lines();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).contains("\"repeated\":2").contains("spool full (2 bytes)");
    }

    @Test
    void manyDistinctKindsKeepTheTrackedStateBounded() {
        LogOutput output = output(LogFormat.TEXT);
        RepeatLimiter limiter = new RepeatLimiter(clock);
        for (int i = 0; i < 5 * RepeatLimiter.MAX_KINDS; i++) {
            limiter.offer(record(Level.WARNING, "x", "kind " + i));
            limiter.offer(record(Level.WARNING, "x", "kind " + i));
        }
        assertThat(limiter.trackedKinds()).isLessThanOrEqualTo(RepeatLimiter.MAX_KINDS);
        output.close();
    }

    @Test
    void recordsBelowTheLevelAreNeitherWrittenNorCounted() {
        LogOutput output = output(LogFormat.TEXT);
        output.setLevel(LogLevel.WARN.julLevel());
        output.publish(record(Level.INFO, "dev.trainwatch.agent.ship.Shipper", "collector reachable again"));
        output.publish(record(Level.FINE, "dev.trainwatch.agent.ship.Shipper", "detail"));
        assertThat(lines()).isEmpty();
        assertEquals(0, output.records("INFO"));
    }
}
