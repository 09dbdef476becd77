package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.testing.Samples;
import java.time.Duration;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The /v1 API, /metrics, /healthz and the page over a real server on loopback. */
class ApiTest {

    static RunningCollector collector;

    @BeforeAll
    static void start() {
        collector = RunningCollector.start();
    }

    @AfterAll
    static void stop() {
        collector.close();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static JsonNode json(HttpResponse<String> response) throws IOException {
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/json"));
        return Json.MAPPER.readTree(response.body());
    }

    static String error(HttpResponse<String> response) throws IOException {
        JsonNode body = json(response);
        assertThat(body.has("error")).as("error body: " + response.body()).isTrue();
        String message = body.get("error").asText();
        assertThat(message).doesNotContain("\n").doesNotContain("\tat ");
        return message;
    }

    static byte[] gzip(byte[] raw) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(raw);
        }
        return out.toByteArray();
    }

    // ---- PUT /v1/runs/{id} ----------------------------------------------------------------------------------

    @Test
    void putRunAnswersTheRunWithItsEstimate() throws IOException {
        HttpResponse<String> response = collector.putJson("/v1/runs/put-ok",
                utf8("{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"batch\":8,\"total_steps\":1000}"));
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode run = json(response);
        assertThat(run.get("run_id").asText()).isEqualTo("put-ok");
        assertThat(run.at("/estimate/peak_memory_bytes").asLong()).isEqualTo(FakePredictor.FIXED_PEAK_BYTES);
        assertThat(run.at("/estimate/step_seconds").asDouble()).isEqualTo(FakePredictor.FIXED_STEP_SECONDS);
    }

    @Test
    void unknownModelIs422WithTheEstimatorsMessage() throws IOException {
        HttpResponse<String> response = collector.putJson("/v1/runs/put-bad-model", utf8("{\"model\":\"sd-9000\"}"));
        assertThat(response.statusCode()).isEqualTo(422);
        assertThat(error(response)).isEqualTo("unknown model 'sd-9000'; see 'trainwatch models'");
        assertThat(collector.get("/v1/runs/put-bad-model").statusCode()).isEqualTo(404);
    }

    @Test
    void impossibleSpecValuesAre422NamingTheField() throws IOException {
        HttpResponse<String> response = collector.putJson("/v1/runs/put-neg", utf8("{\"batch\":-4}"));
        assertThat(response.statusCode()).isEqualTo(422);
        assertThat(error(response)).startsWith("batch must be between 1 and");
    }

    @Test
    void runIdWithBadCharactersOrTooLongIs422() throws IOException {
        HttpResponse<String> spaces = collector.putJson("/v1/runs/bad%20id%21", utf8("{}"));
        assertThat(spaces.statusCode()).isEqualTo(422);
        assertThat(error(spaces)).contains("run_id may only contain");
        HttpResponse<String> tooLong = collector.putJson("/v1/runs/" + "r".repeat(129), utf8("{}"));
        assertThat(tooLong.statusCode()).isEqualTo(422);
        assertThat(error(tooLong)).contains("longer than 128");
    }

    @Test
    void malformedJsonIs400SayingWhere() throws IOException {
        HttpResponse<String> response = collector.putJson("/v1/runs/put-malformed", utf8("{\"batch\": 8,\n \"gpu\": }"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(error(response)).startsWith("malformed JSON at line 2, column");
    }

    @Test
    void wrongTypeIs400NamingTheField() throws IOException {
        HttpResponse<String> response = collector.putJson("/v1/runs/put-type", utf8("{\"batch\": \"many\"}"));
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(error(response)).startsWith("wrong type for batch").endsWith("expected an integer");
    }

    @Test
    void wrongContentTypeIs415() throws IOException {
        HttpResponse<String> response = collector.send("PUT", "/v1/runs/put-415", "text/plain", utf8("{}"));
        assertThat(response.statusCode()).isEqualTo(415);
        assertThat(error(response)).contains("application/json");
    }

    // ---- POST /v1/runs/{id}/steps ---------------------------------------------------------------------------

    @Test
    void stepsAcceptOneEventOrAnArray() throws IOException {
        HttpResponse<String> one = collector.postJson("/v1/runs/steps-ok/steps",
                utf8("{\"step\": 10, \"time_s\": 1.5, \"data_time_s\": 0.2}"));
        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(json(one).get("accepted").asInt()).isEqualTo(1);
        HttpResponse<String> many = collector.postJson("/v1/runs/steps-ok/steps",
                utf8("[{\"step\": 11, \"time_s\": 1.4}, {\"step\": 12, \"time_s\": 1.6, \"interval_steps\": 1}]"));
        assertThat(many.statusCode()).isEqualTo(200);
        assertThat(json(many).get("accepted").asInt()).isEqualTo(2);
        JsonNode run = json(collector.get("/v1/runs/steps-ok"));
        assertThat(run.at("/observed/last_step").asLong()).isEqualTo(12);
        assertThat(collector.get("/metrics").body()).contains("trainwatch_run_step_seconds_count{run_id=\"steps-ok\"} 3");
    }

    @Test
    void outOfRangeStepsAre422NamingTheField() throws IOException {
        record Case(String body, String message) {
        }
        List<Case> cases = List.of(
                new Case("{\"step\": -1, \"time_s\": 1}", "step must be between 0 and"),
                new Case("{\"step\": 1, \"time_s\": 0}", "time_s must be > 0 and at most one day"),
                new Case("{\"step\": 1, \"time_s\": 86401}", "time_s must be > 0 and at most one day"),
                new Case("{\"step\": 1, \"time_s\": 1e400}", "time_s must be a finite number"),
                new Case("{\"step\": 1, \"time_s\": 1, \"data_time_s\": -0.5}", "data_time_s must be between 0"),
                new Case("[{\"step\": 1, \"time_s\": 1}, {\"step\": 2}]", "[1].time_s is missing"),
                new Case("[]", "no step events"));
        for (Case c : cases) {
            HttpResponse<String> response = collector.postJson("/v1/runs/steps-bad/steps", utf8(c.body()));
            assertThat(response.statusCode()).as(c.body()).isEqualTo(422);
            assertThat(error(response)).as(c.body()).contains(c.message());
        }
        assertThat(collector.get("/v1/runs/steps-bad").statusCode()).isEqualTo(404);
    }

    @Test
    void aNanStepTimeIsRefusedAndANanLossIsKept() throws IOException {
        HttpResponse<String> response = collector.postJson("/v1/runs/steps-nan/steps",
                utf8("{\"step\": 1, \"time_s\": NaN}"));
        assertThat(response.statusCode()).isEqualTo(422);
        assertThat(error(response)).contains("time_s").doesNotContain("\n");
        // Python's json.dumps writes a diverged loss as a bare NaN: a reading the collector keeps.
        HttpResponse<String> diverged = collector.postJson("/v1/runs/steps-nan/steps",
                utf8("{\"step\": 2, \"time_s\": 1.5, \"loss\": NaN, \"grad_norm\": Infinity}"));
        assertThat(diverged.statusCode()).isEqualTo(200);
    }

    // ---- POST /v1/samples -----------------------------------------------------------------------------------

    @Test
    void batchIsAppliedAndAReplayIsADuplicate() throws IOException {
        AgentBatch batch = Payloads.batch("samples-host", 5, collector.clock.seconds(), 4, "samples-run");
        HttpResponse<String> first = collector.postJson("/v1/samples", Payloads.json(batch));
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(json(first).get("duplicate").asBoolean()).isFalse();
        HttpResponse<String> replay = collector.postJson("/v1/samples", Payloads.json(batch));
        assertThat(replay.statusCode()).isEqualTo(200);
        assertThat(json(replay).get("duplicate").asBoolean()).isTrue();

        JsonNode run = json(collector.get("/v1/runs/samples-run"));
        assertThat(run.at("/observed/gpu_count").asInt()).isEqualTo(4);
        String scrape = collector.get("/metrics").body();
        assertThat(scrape).contains("trainwatch_gpu_memory_used_bytes{gpu=\"3\",gpu_uuid=\""
                + Payloads.uuid("samples-host", 3) + "\",host=\"samples-host\"}");
        assertThat(scrape).contains("trainwatch_gpu_run_info{gpu=\"0\",gpu_uuid=\"" + Payloads.uuid("samples-host", 0)
                + "\",host=\"samples-host\",run_id=\"samples-run\"} 1");
        assertThat(counter(scrape, "duplicate")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void gzipBodiesAreAccepted() throws IOException {
        AgentBatch batch = Payloads.batch("gzip-host", 1, collector.clock.seconds(), 64, null);
        HttpResponse<String> response = collector.postJson("/v1/samples", gzip(Payloads.json(batch)),
                "Content-Encoding", "gzip");
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(json(response).get("gpus").asInt()).isEqualTo(64);
    }

    /** An agent with --ship-every sends several readings of each GPU: the answer counts GPUs and readings apart. */
    @Test
    void aBatchOfSeveralPollsIsCountedInGpusAndReadings() throws IOException {
        double now = collector.clock.seconds();
        List<GpuSample> readings = new ArrayList<>();
        for (int poll = 2; poll >= 0; poll--) {
            readings.addAll(Payloads.batch("polls-host", 1, now - poll, 4, null).gpus());
        }
        AgentBatch first = Payloads.batch("polls-host", 1, now, 4, null);
        AgentBatch batch = new AgentBatch(first.host(), first.agentId(), first.seq(), readings, first.runs(),
                first.events(), first.health(), null, null, null);
        HttpResponse<String> response = collector.postJson("/v1/samples", Payloads.json(batch));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(json(response).get("gpus").asInt()).isEqualTo(4);
        assertThat(json(response).get("readings").asInt()).isEqualTo(12);
        assertThat(collector.server.fleet().agents()).filteredOn(a -> a.host().equals("polls-host"))
                .singleElement().satisfies(a -> assertThat(a.gpuCount()).isEqualTo(4));
    }

    /**
     * Steps carried in the batch ({@code run_steps}) are applied with it; the answer always says how many were taken
     * (that is how an agent learns this collector takes them); bad steps are refused alone, the readings kept.
     */
    @Test
    void stepsInTheBatchAreAppliedAndBadOnesCostOnlyThemselves() throws IOException {
        double now = collector.clock.seconds();
        AgentBatch plain = Payloads.batch("steps-in-host", 1, now, 2, "steps-in-run");
        HttpResponse<String> without = collector.postJson("/v1/samples", Payloads.json(plain));
        assertThat(json(without).get("steps_accepted").asInt()).isZero();
        assertThat(json(without).has("steps_refused")).isFalse();

        AgentBatch carrying = Payloads.batch("steps-in-host", 2, now, 2, "steps-in-run");
        carrying = new AgentBatch(carrying.host(), carrying.agentId(), carrying.seq(), carrying.gpus(),
                carrying.runs(), carrying.events(), carrying.health(), carrying.hostMemory(), carrying.sentAt(),
                List.of(new dev.trainwatch.protocol.RunSteps("steps-in-run", List.of(
                        Samples.withSource(StepEvent.of(41, 2.0, now - 2), "log"),
                        Samples.withSource(StepEvent.of(42, 2.0, now), "log")))));
        HttpResponse<String> taken = collector.postJson("/v1/samples", gzip(Payloads.json(carrying)),
                "Content-Encoding", "gzip");
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(200);
        assertThat(json(taken).get("steps_accepted").asInt()).isEqualTo(2);
        JsonNode run = json(collector.get("/v1/runs/steps-in-run"));
        assertThat(run.at("/observed/last_step").asLong()).isEqualTo(42);

        AgentBatch bad = Payloads.batch("steps-in-host", 3, now + 1, 2, "steps-in-run");
        bad = new AgentBatch(bad.host(), bad.agentId(), bad.seq(), bad.gpus(), bad.runs(), bad.events(),
                bad.health(), bad.hostMemory(), bad.sentAt(), List.of(new dev.trainwatch.protocol.RunSteps(
                        "steps-in-run", List.of(Samples.withSource(StepEvent.of(43, -1.0, now + 1), "log")))));
        HttpResponse<String> refused = collector.postJson("/v1/samples", Payloads.json(bad));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(200);
        assertThat(json(refused).get("steps_accepted").asInt()).isZero();
        assertThat(json(refused).get("steps_refused").asText())
                .isEqualTo("run_steps[0].steps[0].time_s must be > 0 and at most one day (86400), got -1.0");
        assertThat(collector.server.fleet().agents()).filteredOn(a -> a.host().equals("steps-in-host"))
                .singleElement().satisfies(a -> assertThat(a.lastSeq()).isEqualTo(3));
        assertThat(json(collector.get("/v1/runs/steps-in-run")).at("/observed/last_step").asLong()).isEqualTo(42);
    }

    @Test
    void gzipBombIs413() throws IOException {
        byte[] zeros = new byte[20 << 20]; // 20 MiB of zeros: about 20 KB compressed, above the 16 MiB cap
        HttpResponse<String> response = collector.postJson("/v1/samples", gzip(zeros), "Content-Encoding", "gzip");
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(error(response)).contains("inflates beyond");
    }

    @Test
    void brokenGzipIs400AndUnknownEncodingIs415() throws IOException {
        HttpResponse<String> broken = collector.postJson("/v1/samples", utf8("not gzip at all"),
                "Content-Encoding", "gzip");
        assertThat(broken.statusCode()).isEqualTo(400);
        assertThat(error(broken)).startsWith("bad gzip body");
        HttpResponse<String> brotli = collector.postJson("/v1/samples", utf8("{}"), "Content-Encoding", "br");
        assertThat(brotli.statusCode()).isEqualTo(415);
    }

    @Test
    void bodyAboveTheLimitIs413() throws IOException {
        byte[] big = new byte[(4 << 20) + 1];
        java.util.Arrays.fill(big, (byte) ' ');
        HttpResponse<String> response = collector.postJson("/v1/samples", big);
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(error(response)).contains("too large");
    }

    @Test
    void impossibleReadingsAre422NamingTheField() throws IOException {
        double ts = collector.clock.seconds();
        GpuSample good = Payloads.sample(ts, 0, "GPU-range", 1_000, 0.5, List.of());
        record Case(GpuSample sample, String message) {
        }
        List<Case> cases = List.of(
                new Case(with(good, -5L, good.utilizationRatio()), "gpus[0].memory_used_bytes must be between 0"),
                new Case(with(good, good.memoryUsedBytes(), 1.5), "gpus[0].utilization_ratio must be between 0 and 1"),
                new Case(with(good, Payloads.A100_BYTES + 1, 0.5), "exceeds memory_total_bytes"));
        long seq = 1;
        for (Case c : cases) {
            AgentBatch batch = new AgentBatch("range-host", "range-agent", seq++, List.of(c.sample()), null, null,
                    null, null, null, null);
            HttpResponse<String> response = collector.postJson("/v1/samples", Payloads.json(batch));
            assertThat(response.statusCode()).isEqualTo(422);
            assertThat(error(response)).contains(c.message());
        }
        List<GpuSample> tooMany = new ArrayList<>();
        for (int i = 0; i < 4_097; i++) {
            tooMany.add(good);
        }
        HttpResponse<String> response = collector.postJson("/v1/samples",
                Payloads.json(new AgentBatch("range-host", "range-agent", 99, tooMany, null, null, null, null, null, null)));
        assertThat(response.statusCode()).isEqualTo(422);
        assertThat(error(response)).contains("more than the limit of 4096");
    }

    private static GpuSample with(GpuSample s, Long used, Double utilization) {
        return new GpuSample(s.ts(), s.index(), s.uuid(), s.name(), s.pciBusId(), s.memoryTotalBytes(), used,
                s.memoryReservedBytes(), s.memoryFreeBytes(), utilization, s.memoryUtilizationRatio(),
                s.utilizationWindow(), s.smClockHz(), s.smClockMaxHz(), s.memClockHz(), s.memClockMaxHz(),
                s.clockEventReasons(), s.powerWatts(), s.powerLimitWatts(), s.energyJoules(), s.temperatureCelsius(),
                s.pstate(), s.processes(), s.lost(), null);
    }

    // ---- reads and errors -----------------------------------------------------------------------------------

    @Test
    void listsRunsAndAnswers404ForAnUnknownOne() throws IOException {
        collector.putJson("/v1/runs/listed", utf8("{\"model\":\"pixart-sigma-xl-2\"}"));
        JsonNode runs = json(collector.get("/v1/runs")).get("runs");
        assertThat(runs.findValuesAsText("run_id")).contains("listed");
        HttpResponse<String> unknown = collector.get("/v1/runs/never-seen");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(error(unknown)).isEqualTo("unknown run 'never-seen'");
    }

    @Test
    void unknownPathsAndMethodsAreJsonErrors() throws IOException {
        HttpResponse<String> missing = collector.get("/v2/nothing");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(error(missing)).startsWith("no such endpoint");
        HttpResponse<String> method = collector.send("PATCH", "/v1/runs/x", null, new byte[0]);
        assertThat(method.statusCode()).isEqualTo(405);
        assertThat(error(method)).startsWith("method PATCH not allowed");
    }

    @Test
    void healthzAndMetricsAnswer() throws IOException {
        HttpResponse<String> health = collector.get("/healthz");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(json(health).get("status").asText()).isEqualTo("ok");
        HttpResponse<String> metrics = collector.get("/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        assertThat(metrics.body()).contains("# TYPE trainwatch_ingest_requests_total counter");
    }

    @Test
    void outcomesAreCounted() throws IOException {
        double before = counter(collector.get("/metrics").body(), "unsupported_media_type");
        collector.send("POST", "/v1/samples", "text/csv", utf8("a,b"));
        assertThat(counter(collector.get("/metrics").body(), "unsupported_media_type")).isEqualTo(before + 1);
    }

    @Test
    void rootServesThePageFromTheClasspath() throws IOException {
        HttpResponse<String> page = collector.get("/");
        try (InputStream index = getClass().getClassLoader().getResourceAsStream("webroot/index.html")) {
            if (index == null) {
                assertThat(page.statusCode()).isEqualTo(404);
            } else {
                assertThat(page.statusCode()).isEqualTo(200);
                assertThat(page.body()).isEqualTo(new String(index.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
    }

    static double counter(String scrape, String outcome) {
        String prefix = "trainwatch_ingest_requests_total{outcome=\"" + outcome + "\"} ";
        return scrape.lines().filter(l -> l.startsWith(prefix)).mapToDouble(l -> Double.parseDouble(
                l.substring(prefix.length()))).findFirst().orElse(Double.NaN);
    }

    @Test
    void theShippedDocsAreServedAsHtmlWithAnIdOnEveryRunbookHeading() throws IOException {
        HttpResponse<String> alerts = collector.get("/docs/ALERTS.md");
        assertThat(alerts.statusCode()).isEqualTo(200);
        assertThat(alerts.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        // Every alert in the shipped rule files links here: its heading must carry the id the link names.
        assertThat(alerts.body()).contains("id=\"trainwatchrunoomrisk\"", "id=\"trainwatchrunslownode\"",
                "id=\"trainwatchlimitreached\"", "<table>");
        for (String bad : List.of("/docs/NOPE.md", "/docs/..%2Fpom.xml", "/docs/alerts.md", "/docs/ALERTS.txt")) {
            HttpResponse<String> response = collector.get(bad);
            assertThat(response.statusCode()).as(bad).isEqualTo(404);
            assertThat(error(response)).as(bad).startsWith("no such ");
        }
    }

    @Test
    void aMisspelledSpecFieldIs422NamingEveryUnknownFieldAndRegistersNothing() throws IOException {
        HttpResponse<String> response = collector.putJson("/v1/runs/put-typo", utf8(
                "{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"bacth\":4,\"resoluton\":512}"));
        assertThat(response.statusCode()).isEqualTo(422);
        assertThat(error(response)).startsWith("unknown fields 'bacth', 'resoluton' in the run spec; known fields: ")
                .contains("batch", "resolution", "total_steps");
        assertThat(collector.get("/v1/runs/put-typo").statusCode()).isEqualTo(404);
    }

    @Test
    void deleteForgetsARunEvenOneThatIsOnlyASpec() throws IOException {
        assertThat(collector.putJson("/v1/runs/put-then-delete",
                utf8("{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"batch\":8}")).statusCode())
                .isEqualTo(200);
        HttpResponse<String> deleted = collector.send("DELETE", "/v1/runs/put-then-delete", null, new byte[0]);
        assertThat(deleted.statusCode()).isEqualTo(200);
        assertThat(json(deleted).get("deleted").asBoolean()).isTrue();
        assertThat(collector.get("/v1/runs/put-then-delete").statusCode()).isEqualTo(404);
        HttpResponse<String> again = collector.send("DELETE", "/v1/runs/put-then-delete", null, new byte[0]);
        assertThat(again.statusCode()).isEqualTo(404);
        assertThat(error(again)).isEqualTo("unknown run 'put-then-delete'");
    }
}
