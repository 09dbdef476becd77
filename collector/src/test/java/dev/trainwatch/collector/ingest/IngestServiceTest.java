package dev.trainwatch.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.detect.DetectorSettings;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.FleetListener;
import dev.trainwatch.collector.state.FleetSettings;
import dev.trainwatch.collector.testing.FakePredictor;
import dev.trainwatch.protocol.testing.SettableClock;
import dev.trainwatch.protocol.StepEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * Ingest without HTTP: a path other than the handlers (a replay, a test) gets the same decoding, limits, validation,
 * fleet calls and answers through {@link IngestService}.
 */
class IngestServiceTest {
    private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fleet fleet = new Fleet(FakePredictor.fixed(), clock, FleetSettings.defaults(),
            DetectorSettings.defaults());
    /** The steps the fleet's outbox published (what feeds the step-time metric). */
    private final List<String> stepMetrics = new ArrayList<>();
    private final IngestService ingest = new IngestService(CollectorConfig.Limits.defaults(), fleet, timeout -> true);

    {
        fleet.addListener(new FleetListener() {
            @Override
            public void onStepsApplied(String runId, List<StepEvent> steps) {
                stepMetrics.add(runId + ":" + steps.size());
            }
        });
    }

    @Test
    void aGzipBatchWithStepsIsAppliedAndItsStepsCounted() throws IOException {
        IngestService.BatchAnswer answer = ingest.batch(gzip(batch("node-1", 1)), "gzip", null, host -> {
        });

        assertThat(answer.duplicate()).isFalse();
        assertThat(List.of(answer.gpus(), answer.readings(), answer.stepsAccepted())).containsExactly(1, 1, 2);
        assertThat(fleet.counts().gpus()).isEqualTo(1);
        assertThat(stepMetrics).containsExactly("run-1:2");
        assertThat(ingest.batch(gzip(batch("node-1", 1)), "gzip", null, host -> {
        }).duplicate()).isTrue();
    }

    @Test
    void stepsOfARequestAreValidatedAppliedAndCounted() {
        byte[] body = "[{\"step\":1,\"time_s\":0.5},{\"step\":2,\"time_s\":0.5}]".getBytes(StandardCharsets.UTF_8);
        assertThat(ingest.steps("run-2", null, null, body, null)).isEqualTo(new IngestService.StepsAnswer("run-2", 2));
        assertThat(stepMetrics).containsExactly("run-2:2");

        byte[] week = "{\"step\":3,\"time_s\":604800}".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> ingest.steps("run-2", null, null, week, null)).isInstanceOf(ApiError.class)
                .hasMessage("time_s must be > 0 and at most one day (86400), got 604800.0")
                .extracting(e -> ((ApiError) e).status()).isEqualTo(ApiError.UNPROCESSABLE);
        assertThatThrownBy(() -> ingest.steps("a/b", null, null, body, null)).isInstanceOf(ApiError.class)
                .hasMessageStartingWith("run_id may only contain");
    }

    @Test
    void aBatchItsSenderMayNotSpeakForIsRefusedBeforeTheFleetSeesIt() {
        byte[] body = batch("node-2", 1).getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> ingest.batch(body, null, null, host -> {
            throw new ApiError(ApiError.FORBIDDEN, "not " + host);
        })).isInstanceOf(ApiError.class).hasMessage("not node-2");
        assertThat(fleet.counts().gpus()).isZero();
        assertThat(stepMetrics).isEmpty();
    }

    private String batch(String host, long seq) {
        double ts = clock.seconds();
        return "{\"host\":\"" + host + "\",\"agent_id\":\"" + host + "-a\",\"seq\":" + seq + ",\"gpus\":[{\"ts\":" + ts
                + ",\"index\":0,\"uuid\":\"GPU-0\",\"memory_total_bytes\":85899345920,\"memory_used_bytes\":1073741824,"
                + "\"utilization_ratio\":0.5}],\"runs\":[{\"run_id\":\"run-1\",\"pids\":[7],\"gpu_uuids\":[\"GPU-0\"]}],"
                + "\"run_steps\":[{\"run_id\":\"run-1\",\"steps\":[{\"step\":1,\"time_s\":0.5},{\"step\":2,"
                + "\"time_s\":0.5}]}]}";
    }

    private static byte[] gzip(String text) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(text.getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }
}
