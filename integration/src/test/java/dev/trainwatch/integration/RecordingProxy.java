package dev.trainwatch.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.protocol.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPInputStream;

/**
 * An HTTP proxy between agents and a collector for the operations suite: forwards every request, records each agent
 * batch with the collector's answer, answers 503 while paused or while the collector is down (the agent spools and
 * retries, as with any outage), and can lose the answer to a request with steps the collector applied. Thread-safe.
 */
final class RecordingProxy implements AutoCloseable {

    /** One batch as the proxy saw it: what the agent sent and what the collector answered (0: no answer). */
    record Batch(String agentId, String host, long seq, double sentAt, int status, boolean duplicate) {
    }

    /** One step report of a steps request, with the collector's answer to the request (0: no answer). */
    record StepPost(String path, String source, int rank, long step, int status) {
    }

    private final URI target;
    private final HttpServer server;
    private final ExecutorService workers = Executors.newFixedThreadPool(8);
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final Object gate = new Object();
    private final List<Batch> batches = new ArrayList<>();
    private final List<StepPost> stepPosts = new ArrayList<>();
    private final AtomicReference<CompletableFuture<Void>> cutOff = new AtomicReference<>();
    private volatile Callable<java.util.Map<String, Double>> cutOffAction;
    private volatile java.util.Map<String, Double> cutOffResult;
    private boolean paused;
    private int inFlight;
    private int cutOffs;

    RecordingProxy(URI target) {
        this.target = target;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", this::handle);
        server.setExecutor(workers);
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            synchronized (gate) {
                if (paused) {
                    answer(exchange, 503, "paused");
                    return;
                }
                inFlight++;
            }
            try {
                forward(exchange);
            } finally {
                synchronized (gate) {
                    inFlight--;
                    gate.notifyAll();
                }
            }
        }
    }

    private void forward(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        String path = exchange.getRequestURI().getRawPath()
                + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery());
        HttpRequest.Builder request = HttpRequest.newBuilder(target.resolve(path)).timeout(Duration.ofSeconds(10))
                .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
        for (String header : new String[] {"Content-Type", "Content-Encoding", "Authorization", "Trainwatch-Sent-At"}) {
            String value = exchange.getRequestHeaders().getFirst(header);
            if (value != null) {
                request.header(header, value);
            }
        }
        HttpResponse<byte[]> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            record(path, body, 0, null);
            answer(exchange, 503, "collector unreachable");
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer(exchange, 503, "interrupted");
            return;
        }
        boolean carriesSteps = record(path, body, response.statusCode(), response.body());
        CompletableFuture<Void> lose = cutOff.get();
        if (lose != null && carriesSteps && response.statusCode() == 200 && cutOff.compareAndSet(lose, null)) {
            // Applied by the collector; the answer never reaches the agent, and the collector goes down.
            try {
                synchronized (gate) {
                    paused = true;
                    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                    while (inFlight > 1 && System.nanoTime() < deadline) {
                        gate.wait(100);
                    }
                }
                cutOffResult = cutOffAction.call();
                synchronized (gate) {
                    cutOffs++;
                }
                lose.complete(null);
            } catch (Exception e) {
                lose.completeExceptionally(e);
            }
            answer(exchange, 503, "answer lost");
            return;
        }
        exchange.sendResponseHeaders(response.statusCode(), response.body().length == 0 ? -1 : response.body().length);
        if (response.body().length > 0) {
            exchange.getResponseBody().write(response.body());
        }
    }

    /** Records the request; true when it carried step reports (a steps request, or a batch with run_steps). */
    private boolean record(String path, byte[] body, int status, byte[] answer) {
        if (path.contains("/steps")) {
            recordSteps(path, body, status);
            return true;
        }
        if (!path.equals("/v1/samples")) {
            return false;
        }
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            JsonNode batch = Json.MAPPER.readTree(in);
            boolean duplicate = false;
            if (answer != null && status == 200) {
                duplicate = Json.MAPPER.readTree(answer).path("duplicate").asBoolean();
            }
            // Steps carried in the batch (an agent whose collector takes them), recorded as a steps request would be.
            List<StepPost> carried = new ArrayList<>();
            for (JsonNode group : batch.path("run_steps")) {
                String as = "/v1/runs/" + group.path("run_id").asText() + "/steps in batch " + batch.path("seq").asLong();
                for (JsonNode step : group.path("steps")) {
                    carried.add(new StepPost(as, step.path("source").asText(""), step.path("rank").asInt(-1),
                            step.path("step").asLong(), status));
                }
            }
            synchronized (gate) {
                batches.add(new Batch(batch.path("agent_id").asText(), batch.path("host").asText(),
                        batch.path("seq").asLong(), batch.path("sent_at").asDouble(), status, duplicate));
                stepPosts.addAll(carried);
            }
            return !carried.isEmpty();
        } catch (IOException | RuntimeException e) {
            // Not a batch the proxy can read: nothing to record.
            return false;
        }
    }

    private void recordSteps(String path, byte[] body, int status) {
        try (InputStream in = body.length > 1 && body[0] == (byte) 0x1f && body[1] == (byte) 0x8b
                ? new GZIPInputStream(new ByteArrayInputStream(body)) : new ByteArrayInputStream(body)) {
            JsonNode steps = Json.MAPPER.readTree(in);
            List<StepPost> posts = new ArrayList<>();
            for (JsonNode step : steps.isArray() ? steps : List.of(steps)) {
                posts.add(new StepPost(path, step.path("source").asText(""), step.path("rank").asInt(-1),
                        step.path("step").asLong(), status));
            }
            synchronized (gate) {
                stepPosts.addAll(posts);
            }
        } catch (IOException | RuntimeException e) {
            // Not a body the proxy can read: nothing to record.
        }
    }

    /** Every step report forwarded so far, in the order the requests were answered. */
    List<StepPost> stepPosts() {
        synchronized (gate) {
            return List.copyOf(stepPosts);
        }
    }

    private static void answer(HttpExchange exchange, int status, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    /** Answers 503 to new requests and waits (at most {@code max}) until none is in flight. */
    void pauseAndDrain(Duration max) throws InterruptedException {
        synchronized (gate) {
            paused = true;
            long deadline = System.nanoTime() + max.toNanos();
            while (inFlight > 0 && System.nanoTime() < deadline) {
                gate.wait(100);
            }
        }
    }

    void resume() {
        synchronized (gate) {
            paused = false;
        }
    }

    /**
     * Lets the next request with steps (a steps request, or a batch that carries them) through to the collector and,
     * once it answered 200, pauses, runs {@code action}
     * (read the counts, stop the collector) and answers the agent 503 instead: the request was applied, its answer
     * lost. Returns what {@code action} returned.
     */
    java.util.Map<String, Double> cutOffNextSteps(Callable<java.util.Map<String, Double>> action, Duration max)
            throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        cutOffAction = action;
        cutOff.set(done);
        done.get(max.toMillis(), TimeUnit.MILLISECONDS);
        return cutOffResult;
    }

    int cutOffs() {
        synchronized (gate) {
            return cutOffs;
        }
    }

    List<Batch> batches() {
        synchronized (gate) {
            return List.copyOf(batches);
        }
    }

    long batchCount() {
        synchronized (gate) {
            return batches.size();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        workers.shutdownNow();
    }
}
