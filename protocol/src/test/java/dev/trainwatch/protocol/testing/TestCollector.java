package dev.trainwatch.protocol.testing;

import com.fasterxml.jackson.core.type.TypeReference;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RunSpec;
import dev.trainwatch.protocol.RunSteps;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;

/**
 * A fake collector for the agent's tests (the one fake; the collector's own tests run the real server): the JDK's HTTP
 * server on loopback, recording what it accepts and de-duplicating
 * batches by (agent_id, seq) the way the real collector does (a seq not above the last applied one is a replay).
 * It can be stopped and started again on the same port. Thread-safe.
 */
public final class TestCollector implements AutoCloseable {

    private final Object lock = new Object();
    private final List<AgentBatch> accepted = new ArrayList<>();
    private final Map<String, Long> lastSeq = new HashMap<>();
    private final Map<String, List<StepEvent>> steps = new HashMap<>();
    private final Map<String, RunSpec> specs = new HashMap<>();
    private final List<String> authorizations = new ArrayList<>();
    private final AtomicInteger replays = new AtomicInteger();
    private volatile Function<AgentBatch, Integer> statusForBatch = b -> 200;
    /** Takes steps in batches ({@code run_steps}) and says so in its answers, as a current collector does. */
    private volatile boolean takesSteps;
    private final AtomicInteger stepRequests = new AtomicInteger();
    private HttpServer server;
    private int port;

    /** Starts on an ephemeral loopback port. */
    public TestCollector() {
        start(0);
    }

    /** Starts again (after {@link #stop()}) on the port it had. */
    public void restart() {
        start(port);
    }

    private void start(int wanted) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), wanted), 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/v1/", this::handle);
        server.start();
        port = server.getAddress().getPort();
    }

    /** Stops listening; connections are refused until {@link #restart()}. */
    public void stop() {
        server.stop(0);
    }

    public URI uri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Whether it takes steps in batches, as a current collector does (an older one, by default, ignores them). */
    public void takesSteps(boolean takes) {
        takesSteps = takes;
    }

    /** Requests of steps alone ({@code POST /v1/runs/{id}/steps}) so far. */
    public int stepRequests() {
        return stepRequests.get();
    }

    /** Answers batches with the status the function gives (e.g. 500 while "broken", 400 for a bad one). */
    public void answer(Function<AgentBatch, Integer> status) {
        statusForBatch = status;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body;
            try (InputStream in = "gzip".equals(exchange.getRequestHeaders().getFirst("Content-Encoding"))
                    ? new GZIPInputStream(exchange.getRequestBody()) : exchange.getRequestBody()) {
                body = in.readAllBytes();
            }
            String path = exchange.getRequestURI().getRawPath();
            int status = 200;
            boolean takes = takesSteps;
            int stepsAccepted = 0;
            synchronized (lock) {
                authorizations.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
            }
            if (path.equals("/v1/samples") && exchange.getRequestMethod().equals("POST")) {
                AgentBatch batch = Json.MAPPER.readValue(body, AgentBatch.class);
                status = statusForBatch.apply(batch);
                if (status == 200) {
                    synchronized (lock) {
                        Long last = lastSeq.get(batch.agentId());
                        if (last != null && batch.seq() <= last) {
                            replays.incrementAndGet();
                        } else {
                            lastSeq.put(batch.agentId(), batch.seq());
                            accepted.add(batch);
                            if (takes && batch.runSteps() != null) {
                                for (RunSteps group : batch.runSteps()) {
                                    steps.computeIfAbsent(group.runId(), k -> new ArrayList<>()).addAll(group.steps());
                                    stepsAccepted += group.steps().size();
                                }
                            }
                        }
                    }
                }
            } else if (path.startsWith("/v1/runs/") && path.endsWith("/steps")) {
                String runId = URLDecoder.decode(path.substring(9, path.length() - 6), StandardCharsets.UTF_8);
                List<StepEvent> events = Json.MAPPER.readValue(body, new TypeReference<List<StepEvent>>() { });
                stepRequests.incrementAndGet();
                synchronized (lock) {
                    steps.computeIfAbsent(runId, k -> new ArrayList<>()).addAll(events);
                }
            } else if (path.startsWith("/v1/runs/") && exchange.getRequestMethod().equals("PUT")) {
                String runId = URLDecoder.decode(path.substring(9), StandardCharsets.UTF_8);
                synchronized (lock) {
                    specs.put(runId, Json.MAPPER.readValue(body, RunSpec.class));
                }
            } else {
                status = 404;
            }
            byte[] answer = status != 200 ? "{\"error\":\"test says no\"}".getBytes()
                    : takes && path.equals("/v1/samples") ? ("{\"steps_accepted\":" + stepsAccepted + "}").getBytes()
                    : "{}".getBytes();
            exchange.sendResponseHeaders(status, answer.length);
            exchange.getResponseBody().write(answer);
        }
    }

    /** Batches applied, in the order they were applied. */
    public List<AgentBatch> accepted() {
        synchronized (lock) {
            return List.copyOf(accepted);
        }
    }

    public int replays() {
        return replays.get();
    }

    public List<StepEvent> steps(String runId) {
        synchronized (lock) {
            return List.copyOf(steps.getOrDefault(runId, List.of()));
        }
    }

    public Map<String, RunSpec> specs() {
        synchronized (lock) {
            return Map.copyOf(specs);
        }
    }

    public List<String> authorizations() {
        synchronized (lock) {
            return List.copyOf(authorizations);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
