package dev.trainwatch.collector;

import dev.trainwatch.collector.config.CollectorConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.io.TempDir;

/**
 * The assembled collector over HTTP (issue 19): what it applied is not applied again when it comes again — a batch
 * by its agent's {@code seq}, a step by its run, source and rank — also after a restart on the same data directory;
 * a {@code seq} of 2^63-1 does not silence an agent; a bare {@code NaN} in an integer field is a 400; an agent's
 * clock offset moves its readings and steps onto the collector's clock, with one warning.
 */
@Isolated // watches process-wide log handlers
class ReplayAcrossRestartsTest {
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<String> log = new CopyOnWriteArrayList<>();

    @TempDir
    Path dataDir;

    private HttpResponse<String> post(URI base, String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode get(URI base, String path) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve(path)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Json.MAPPER.readTree(r.body());
    }

    private static String batch(String agent, long seq, double sentAt, double sampleTs) {
        return String.format(Locale.ROOT, """
                {"host":"node-1","agent_id":"%s","seq":%d,"sent_at":%.3f,
                 "gpus":[{"ts":%.3f,"index":0,"uuid":"GPU-replay-%s","memory_total_bytes":85899345920,
                          "memory_used_bytes":1000,"utilization_ratio":0.9}]}""", agent, seq, sentAt, sampleTs, agent);
    }

    private static String steps(String source, long from, long to, double ts) {
        List<String> reports = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            reports.add(String.format(Locale.ROOT, "{\"step\":%d,\"time_s\":2.0,\"ts\":%.3f,\"source\":\"%s\"}",
                    s, ts, source));
        }
        return "[" + String.join(",", reports) + "]";
    }

    private static double stepCount(String scrape, String runId) {
        for (String line : scrape.lines().toList()) {
            if (line.startsWith("trainwatch_run_step_seconds_count{") && line.contains("run_id=\"" + runId + "\"")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }

    /** A handler that keeps the messages of WARNING records. */
    private static Handler warningsInto(List<String> warnings) {
        return new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel() == java.util.logging.Level.WARNING) {
                    warnings.add(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
    }

    private static double clockOffset(String scrape, String host) {
        for (String line : scrape.lines().toList()) {
            if (line.startsWith("trainwatch_agent_clock_offset_seconds{host=\"" + host + "\"")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no clock offset for " + host + " in the scrape");
    }

    private String scrape(URI base) throws Exception {
        return http.send(HttpRequest.newBuilder(base.resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void aBatchAndStepsAppliedBeforeARestartAreNotAppliedAgain() throws Exception {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir);
        double now = System.currentTimeMillis() / 1000.0;
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            HttpResponse<String> first = post(base, "/v1/samples", batch("agent-r", 5, now, now));
            assertThat(Json.MAPPER.readTree(first.body()).get("duplicate").asBoolean()).isFalse();
            assertThat(post(base, "/v1/runs/dit-run/steps", steps("3f9a1c2b7d4e.0", 1, 30, now)).statusCode())
                    .isEqualTo(200);
            // The same lines re-read by a restarted agent: dropped.
            assertThat(post(base, "/v1/runs/dit-run/steps", steps("3f9a1c2b7d4e.0", 1, 31, now)).statusCode())
                    .isEqualTo(200);
            assertThat(stepCount(scrape(base), "dit-run")).isEqualTo(31);
        }
        try (CollectorStack restarted = CollectorStack.start(config, log::add)) {
            URI base = restarted.server().uri();
            // seq 5 replayed after the restart (before: "duplicate": false, applied again).
            HttpResponse<String> replay = post(base, "/v1/samples", batch("agent-r", 5, now, now));
            assertThat(replay.statusCode()).isEqualTo(200);
            assertThat(Json.MAPPER.readTree(replay.body()).get("duplicate").asBoolean()).isTrue();
            assertThat(Json.MAPPER.readTree(post(base, "/v1/samples", batch("agent-r", 6, now, now)).body())
                    .get("duplicate").asBoolean()).isFalse();
            // Steps re-sent after the restart: only the new one counts. A new stretch of the file (a new run
            // appended to it) counts from its own start.
            post(base, "/v1/runs/dit-run/steps", steps("3f9a1c2b7d4e.0", 25, 32, now));
            post(base, "/v1/runs/dit-run/steps", steps("3f9a1c2b7d4e.1", 1, 3, now));
            assertThat(stepCount(scrape(base), "dit-run")).isEqualTo(1 + 3);
        }
    }

    @Test
    void aSeqOfTheLargestLongIsRefusedAndTheAgentGoesOn() throws Exception {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0);
        double now = System.currentTimeMillis() / 1000.0;
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            HttpResponse<String> huge = post(base, "/v1/samples", batch("agent-s", Long.MAX_VALUE, now, now));
            assertThat(huge.statusCode()).isEqualTo(422);
            assertThat(huge.body()).contains("seq must be between 0 and 2^53-1");
            // Before: accepted, and every later batch of that agent id was a "duplicate" until a restart.
            HttpResponse<String> next = post(base, "/v1/samples", batch("agent-s", 7, now, now));
            assertThat(Json.MAPPER.readTree(next.body()).get("duplicate").asBoolean()).isFalse();
        }
    }

    @Test
    void aBareNanInAnIntegerFieldIsABadRequest() throws Exception {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0);
        double now = System.currentTimeMillis() / 1000.0;
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            String[] bodies = {
                batch("agent-n", 1, now, now).replace("\"seq\":1", "\"seq\":NaN"),
                batch("agent-n", 1, now, now).replace("\"index\":0", "\"index\":NaN"),
                batch("agent-n", 1, now, now).replace("\"memory_used_bytes\":1000", "\"memory_used_bytes\":NaN"),
                batch("agent-n", 1, now, now).replace("\"memory_used_bytes\":1000", "\"memory_used_bytes\":-Infinity"),
            };
            for (String body : bodies) {
                HttpResponse<String> r = post(base, "/v1/samples", body);
                assertThat(r.statusCode()).as(body).isEqualTo(400);
                assertThat(r.body()).contains("expected an integer");
            }
            HttpResponse<String> step = post(base, "/v1/runs/r/steps", "{\"step\":NaN,\"time_s\":1.0}");
            assertThat(step.statusCode()).isEqualTo(400);
            // A NaN loss is still a reading (a diverged run), not an error.
            assertThat(post(base, "/v1/runs/r/steps", "{\"step\":3,\"time_s\":1.0,\"loss\":NaN}").statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void anAgentWhoseClockIsFifteenMinutesBehindIsCorrectedWithOneWarning() throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        Logger fleetLog = Logger.getLogger("dev.trainwatch.collector.state.Fleet");
        Handler capture = warningsInto(warnings);
        fleetLog.addHandler(capture);
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0);
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            for (int seq = 1; seq <= 5; seq++) {
                double agentNow = System.currentTimeMillis() / 1000.0 - 900;
                String withRun = batch("agent-c", seq, agentNow, agentNow).replaceFirst("\\}\\s*$",
                        ",\"runs\":[{\"run_id\":\"late-run\",\"pids\":[1],\"gpu_uuids\":[\"GPU-replay-agent-c\"]}]}");
                HttpResponse<String> r = post(base, "/v1/samples", withRun);
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            }
            // Its readings count as now (before: 15 minutes old, outside every window, dropped).
            assertThat(get(base, "/v1/runs/late-run").at("/observed/gpu_utilization_ratio").asDouble())
                    .isCloseTo(0.9, org.assertj.core.api.Assertions.within(1e-6));
            double agentNow = System.currentTimeMillis() / 1000.0 - 900;
            post(base, "/v1/runs/late-run/steps?agent_id=agent-c", steps("aa.0", 1, 1, agentNow));
            JsonNode run = get(base, "/v1/runs/late-run");
            assertThat(run.at("/observed/last_step_ts").asDouble())
                    .isCloseTo(System.currentTimeMillis() / 1000.0, org.assertj.core.api.Assertions.within(5.0));
            String scrape = scrape(base);
            assertThat(scrape).containsPattern("trainwatch_agent_clock_offset_seconds\\{host=\"node-1\"} -9\\d\\d\\.");
        } finally {
            fleetLog.removeHandler(capture);
        }
        assertThat(warnings.stream().filter(w -> w.contains("agent agent-c") && w.contains("clock is"))).hasSize(1);
        assertThat(warnings.stream().filter(w -> w.contains("clock is")).findFirst().orElseThrow())
                .contains("agent agent-c on node-1: its clock is 9").contains("s behind the collector's");
    }

    /**
     * After a collector restart, an agent whose clock is right replays 40 batches from its spool, made up to two
     * minutes before (OperationsIT at load 7: "its clock is 126.9 s behind", and every reading moved two minutes
     * ahead). With the time the request was sent ({@code Trainwatch-Sent-At}) the offset stays near zero and nothing
     * is said; without it (an older agent) the batches' own {@code sent_at} is all there is, and the offset is wrong
     * until a live batch comes: the control.
     */
    @Test
    void batchesReplayedFromASpoolDoNotMakeAClockLookBehindWhenTheRequestSaysWhenItWasSent() throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        Logger fleetLog = Logger.getLogger("dev.trainwatch.collector.state.Fleet");
        Handler capture = warningsInto(warnings);
        fleetLog.addHandler(capture);
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0);
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            for (String agent : List.of("agent-r", "agent-old")) {
                double now = System.currentTimeMillis() / 1000.0;
                for (int seq = 1; seq <= 40; seq++) {
                    double madeAt = now - 127 + seq * 0.5;
                    HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve("/v1/samples"))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(batch(agent, seq, madeAt, madeAt)
                                    .replace("\"node-1\"", "\"host-" + agent + "\"")));
                    if (agent.equals("agent-r")) {
                        request.header("Trainwatch-Sent-At",
                                String.format(Locale.ROOT, "%.3f", System.currentTimeMillis() / 1000.0));
                    }
                    HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                }
            }
            String scrape = scrape(base);
            assertThat(clockOffset(scrape, "host-agent-r")).as(scrape).isBetween(-2.0, 0.5);
            assertThat(clockOffset(scrape, "host-agent-old")).as("the control").isLessThan(-60.0);
        } finally {
            fleetLog.removeHandler(capture);
        }
        assertThat(warnings.stream().filter(w -> w.contains("agent agent-r"))).isEmpty();
        assertThat(warnings.stream().filter(w -> w.contains("agent agent-old") && w.contains("behind"))).hasSize(1);
    }

    /**
     * A collector that just restarted hears first from an agent whose clock is 15 minutes behind through a steps
     * request (its spool replays in the order things were made): with the request's send time the steps are moved
     * onto the collector's clock at once; without it (an older agent; the control) they look 15 minutes old until
     * the agent's first batch, which raised a critical {@code stalled} for a second in OperationsIT.
     */
    @Test
    void stepsThatComeBeforeTheAgentsFirstBatchAreMovedByTheRequestsSendTime() throws Exception {
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0);
        try (CollectorStack stack = CollectorStack.start(config, log::add)) {
            URI base = stack.server().uri();
            for (String agent : List.of("agent-s", "agent-older")) {
                double agentNow = System.currentTimeMillis() / 1000.0 - 900;
                HttpRequest.Builder request = HttpRequest.newBuilder(
                                base.resolve("/v1/runs/run-" + agent + "/steps?agent_id=" + agent))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(steps("src." + agent + ".0", 1, 3, agentNow)));
                if (agent.equals("agent-s")) {
                    request.header("Trainwatch-Sent-At", String.format(Locale.ROOT, "%.3f", agentNow));
                }
                HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            }
            double now = System.currentTimeMillis() / 1000.0;
            assertThat(get(base, "/v1/runs/run-agent-s").at("/observed/last_step_ts").asDouble())
                    .isCloseTo(now, org.assertj.core.api.Assertions.within(5.0));
            assertThat(get(base, "/v1/runs/run-agent-older").at("/observed/last_step_ts").asDouble())
                    .as("the control").isCloseTo(now - 900, org.assertj.core.api.Assertions.within(5.0));
        }
    }
}
