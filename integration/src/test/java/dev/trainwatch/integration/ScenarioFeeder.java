package dev.trainwatch.integration;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Plays runs into a collector through its public HTTP API, as an agent and a training script would: the run spec
 * once ({@code PUT /v1/runs/{id}}), then every second an agent batch ({@code POST /v1/samples}) and a step
 * ({@code POST /v1/runs/{id}/steps}). Requests the collector refuses are kept and reported by {@link #errors()}.
 */
final class ScenarioFeeder implements AutoCloseable {
    /**
     * One run on its own node.
     *
     * @param memoryUsedShare device memory in use as a share of capacity
     * @param xidEvery        send XID {@code xid} on GPU 0 every this many batches (0: never)
     * @param steps           whether this node also posts the run's steps (one node does, as rank 0's log would)
     */
    record Run(String runId, String host, int gpus, double memoryUsedShare, double utilization, double dataShare,
               List<String> clockEventReasons, long xid, int xidEvery, boolean steps) {
    }

    private static final long SM_CLOCK_MAX_HZ = 1_410_000_000L;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI collector;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "scenario-feeder");
        t.setDaemon(true);
        return t;
    });
    private final List<String> errors = new CopyOnWriteArrayList<>();

    ScenarioFeeder(URI collector) {
        this.collector = collector;
    }

    /** Registers the run's spec and returns the collector's answer (the run with its {@code estimate}). */
    JsonNode putSpec(String runId, Map<String, Object> spec) throws IOException, InterruptedException {
        HttpResponse<String> response = send(HttpRequest.newBuilder(collector.resolve("/v1/runs/" + runId))
                .PUT(HttpRequest.BodyPublishers.ofString(Json.MAPPER.writeValueAsString(spec))));
        if (response.statusCode() != 200) {
            throw new IllegalStateException("PUT /v1/runs/" + runId + " -> " + response.statusCode() + " " + response.body());
        }
        return Json.MAPPER.readTree(response.body());
    }

    /** Starts playing {@code run} every second, shaped by its estimate (capacity, step time, batch). */
    void play(Run run, JsonNode estimate, int samplesPerStep) {
        long capacity = estimate.path("gpu_memory_bytes").asLong();
        double stepSeconds = estimate.path("step_seconds").asDouble();
        List<String> uuids = new ArrayList<>();
        for (int g = 0; g < run.gpus(); g++) {
            uuids.add("GPU-" + run.host() + "-" + g);
        }
        long[] seq = {0};
        timer.scheduleAtFixedRate(() -> {
            try {
                double now = System.currentTimeMillis() / 1000.0;
                long n = ++seq[0];
                List<GpuSample> gpus = new ArrayList<>();
                for (int g = 0; g < run.gpus(); g++) {
                    long used = (long) (capacity * run.memoryUsedShare());
                    gpus.add(new GpuSample(now, g, uuids.get(g), "NVIDIA A100-SXM4-80GB", null, capacity, used, null,
                            capacity - used, run.utilization(), null,
                            new UtilizationWindow(6, run.utilization() - 0.1, run.utilization(),
                                    Math.min(1, run.utilization() + 0.02), 0.02, now - 1, now),
                            run.clockEventReasons().isEmpty() ? SM_CLOCK_MAX_HZ : SM_CLOCK_MAX_HZ * 7 / 10,
                            SM_CLOCK_MAX_HZ, null, null, run.clockEventReasons(), 330.0, 400.0, null, 68.0, 0,
                            List.of(), false,
                            // the hardware counters, as GPM and the NVLink counters give them (4 GB/s each way)
                            new dev.trainwatch.protocol.GpuActivity(1.0, run.utilization() * 0.95, 0.3,
                                    run.utilization() * 0.6, run.utilization() * 0.55, 0.4, 2.0e9, 1.0e8, 4.0e9,
                                    4.0e9, (long) (now * 4.0e9), (long) (now * 4.0e9))));
                }
                List<AgentEvent> events = run.xidEvery() > 0 && n % run.xidEvery() == 0
                        ? List.of(AgentEvent.xid(now, uuids.get(0), run.xid())) : List.of();
                AgentBatch batch = new AgentBatch(run.host(), "agent-" + run.host(), n, gpus,
                        List.of(new RunAttribution(run.runId(), List.of(4242L), uuids, List.of(), null, false, null, null, null, null, null)), events,
                        new AgentHealth(0.004, 0L, 0L, 0L, 0L, 1.0),
                        // The node's memory, as an agent reads it every few seconds.
                        new dev.trainwatch.protocol.HostMemory(now, 1L << 39, (300L << 30) - n * (1L << 20), 0L,
                                64L << 30, 2L << 30), null, null);
                post("/v1/samples", Json.MAPPER.writeValueAsString(batch));
                if (!run.steps()) {
                    return;
                }
                StepEvent step = new StepEvent(n, stepSeconds, stepSeconds * run.dataShare(), null, null, null, 1,
                        (double) samplesPerStep, 0.1, 1e-4, 1.0, null, null, null, now, null);
                post("/v1/runs/" + run.runId() + "/steps", Json.MAPPER.writeValueAsString(List.of(step)));
            } catch (IOException e) {
                errors.add(run.runId() + ": " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, 0, 1, TimeUnit.SECONDS);
    }

    /** What the collector refused or what failed to send, empty when all went through. */
    List<String> errors() {
        return List.copyOf(errors);
    }

    private void post(String path, String body) throws IOException, InterruptedException {
        HttpResponse<String> response = send(HttpRequest.newBuilder(collector.resolve(path))
                .POST(HttpRequest.BodyPublishers.ofString(body)));
        if (response.statusCode() / 100 != 2) {
            errors.add("POST " + path + " -> " + response.statusCode() + " " + response.body());
        }
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return http.send(request.header("Content-Type", "application/json").timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
