import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.GZIPOutputStream;

/**
 * A scale load for one collector, speaking the agent protocol on the wire (docs/API.md: {@code POST /v1/samples},
 * {@code PUT /v1/runs/{id}}) and nothing of the project's classes, so it keeps working while their internals change.
 * Each simulated node has 8 GPUs and sends a gzip JSON batch every 10 s with ten 1-s polls of the agent's reading set
 * (as {@code trainwatch agent --ship-every 10s} does), its run attribution with ranks, and its run's step reports
 * when it holds rank 0. Runs span 1, 2, 4 or 8 nodes (8–64 GPUs) in turn, each registered with a spec first; GPU 0 of
 * the first and of the last run is throttled (hardware slowdown at half clock while busy) from the start. A batch the
 * collector refuses (429, 503, unreachable) stays at the head of its node's backlog and is sent again, in order, as the
 * agent's spool does. Every 10 s it prints what it sent and how the collector answered; at the end, when the collector
 * named each throttled GPU (the run's {@code throttling} anomaly), the series on the collector's {@code /metrics}, and
 * {@code /healthz}.
 *
 * <pre>java -cp cli/target/trainwatch-all.jar bench/ScaleLoad.java URL GPUS SECONDS [TOKEN_FILE]</pre>
 *
 * Run it through {@code bench/collector-at-scale}, which starts the collector as docs/DEPLOY.md says for the size
 * and measures its CPU and memory.
 */
public class ScaleLoad {
    static final int GPUS_PER_NODE = 8;
    static final int POLLS_PER_BATCH = 10;
    static final long GIB = 1L << 30;
    static final ObjectMapper JSON = new ObjectMapper();

    record Run(String id, int firstNode, int nodes) {
        boolean holds(int node) {
            return node >= firstNode && node < firstNode + nodes;
        }
    }

    final URI base;
    final int nodes;
    final String token;
    final List<Run> runs = new ArrayList<>();
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    final long start = System.currentTimeMillis();
    final Map<Integer, LongAdder> answers = new ConcurrentSkipListMap<>();
    final LongAdder readings = new LongAdder();
    final LongAdder latencyMicros = new LongAdder();
    final LongAdder requests = new LongAdder();
    final Map<String, Double> throttleNamedAfter = new ConcurrentSkipListMap<>();
    /** When each node's first batch was taken, seconds after the load started. */
    final Map<Integer, Double> firstTaken = new ConcurrentSkipListMap<>();

    ScaleLoad(URI base, int gpus, String token) {
        this.base = base;
        this.nodes = gpus / GPUS_PER_NODE;
        this.token = token;
        int[] sizes = {1, 2, 4, 8};
        int node = 0;
        for (int i = 0; node < nodes; i++) {
            int size = Math.min(sizes[i % sizes.length], nodes - node);
            runs.add(new Run(String.format(Locale.ROOT, "bench-run-%05d", i), node, size));
            node += size;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: java -cp trainwatch-all.jar bench/ScaleLoad.java URL GPUS SECONDS [TOKEN_FILE]");
            System.exit(2);
        }
        String token = args.length > 3 ? Files.readString(Path.of(args[3])).strip() : null;
        ScaleLoad load = new ScaleLoad(URI.create(args[0].replaceAll("/$", "")), Integer.parseInt(args[1]), token);
        load.run(Integer.parseInt(args[2]));
    }

    void run(int seconds) throws Exception {
        System.out.printf(Locale.ROOT, "scale load: %d nodes x %d GPUs = %d GPUs, %d runs of 8-64 GPUs, 10-s batches"
                + " of 1-s polls, %d s, against %s%n", nodes, GPUS_PER_NODE, nodes * GPUS_PER_NODE, runs.size(),
                seconds, base);
        for (Run run : runs) {
            putSpec(run);
        }
        ScheduledExecutorService pool = Executors.newScheduledThreadPool(8);
        for (int node = 0; node < nodes; node++) {
            int n = node;
            Deque<byte[]> queue = new ArrayDeque<>();
            long[] seq = {0};
            pool.scheduleAtFixedRate(() -> tick(n, queue, seq), node * 10_000L / nodes, 10_000, TimeUnit.MILLISECONDS);
        }
        pool.scheduleAtFixedRate(this::watchThrottling, 5, 5, TimeUnit.SECONDS);
        pool.scheduleAtFixedRate(this::report, 10, 10, TimeUnit.SECONDS);
        Thread.sleep(seconds * 1000L);
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        summary();
    }

    /** One node's 10-s turn: its new batch joins its backlog, which is sent oldest first until one is refused. */
    void tick(int node, Deque<byte[]> queue, long[] seq) {
        try {
            queue.addLast(gzip(JSON.writeValueAsBytes(batch(node, ++seq[0]))));
            while (!queue.isEmpty()) {
                int status = post("/v1/samples", queue.peekFirst());
                answers.computeIfAbsent(status, s -> new LongAdder()).increment();
                if (status / 100 != 2) {
                    break;
                }
                queue.pollFirst();
                readings.add((long) GPUS_PER_NODE * POLLS_PER_BATCH);
                firstTaken.putIfAbsent(node, (System.currentTimeMillis() - start) / 1000.0);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the load is stopping: not an answer of the collector
        } catch (Exception e) {
            answers.computeIfAbsent(-1, s -> new LongAdder()).increment(); // -1: no answer (unreachable, timeout)
        }
    }

    Map<String, Object> batch(int node, long seq) {
        double now = System.currentTimeMillis() / 1000.0;
        Run run = runs.stream().filter(r -> r.holds(node)).findFirst().orElseThrow();
        boolean throttledNode = node == run.firstNode() && (run == runs.get(0) || run == runs.get(runs.size() - 1));
        List<Object> gpus = new ArrayList<>();
        for (int poll = 0; poll < POLLS_PER_BATCH; poll++) {
            double ts = now - (POLLS_PER_BATCH - 1 - poll);
            for (int g = 0; g < GPUS_PER_NODE; g++) {
                gpus.add(reading(node, g, ts, throttledNode && g == 0));
            }
        }
        List<Object> ranks = new ArrayList<>();
        List<Long> pids = new ArrayList<>();
        List<String> uuids = new ArrayList<>();
        for (int g = 0; g < GPUS_PER_NODE; g++) {
            long pid = 10_000 + g;
            pids.add(pid);
            uuids.add(uuid(node, g));
            ranks.add(Map.of("pid", pid, "rank", (node - run.firstNode()) * GPUS_PER_NODE + g, "local_rank", g,
                    "world_size", run.nodes() * GPUS_PER_NODE, "gpu_uuids", List.of(uuid(node, g)), "state", "R"));
        }
        Map<String, Object> batch = new LinkedHashMap<>();
        batch.put("host", host(node));
        batch.put("agent_id", String.format(Locale.ROOT, "bench-agent-%06d", node));
        batch.put("seq", seq);
        batch.put("sent_at", now);
        batch.put("gpus", gpus);
        batch.put("runs", List.of(Map.of("run_id", run.id(), "pids", pids, "gpu_uuids", uuids, "ranks", ranks)));
        batch.put("events", List.of());
        batch.put("health", Map.of("poll_duration_seconds", 0.004, "failed_reads", 0, "spool_depth", 0,
                "interval_seconds", 1.0, "delivery_alive", true));
        batch.put("host_memory", Map.of("ts", now, "mem_total_bytes", 2048 * GIB, "mem_available_bytes", 1500 * GIB,
                "shm_total_bytes", 1024 * GIB, "shm_used_bytes", 2 * GIB));
        if (node == run.firstNode()) {
            List<Object> steps = new ArrayList<>();
            for (int poll = 0; poll < POLLS_PER_BATCH; poll++) {
                long step = (seq - 1) * POLLS_PER_BATCH + poll + 1;
                steps.add(Map.of("step", step, "time_s", 1.0, "ts", now - (POLLS_PER_BATCH - 1 - poll)));
            }
            batch.put("run_steps", List.of(Map.of("run_id", run.id(), "steps", steps)));
        }
        return batch;
    }

    static Map<String, Object> reading(int node, int g, double ts, boolean throttled) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("ts", ts);
        r.put("index", g);
        r.put("uuid", uuid(node, g));
        r.put("name", "NVIDIA A100-SXM4-80GB");
        r.put("pci_bus_id", String.format(Locale.ROOT, "00000000:%02X:00.0", 7 + g));
        r.put("memory_total_bytes", 80 * GIB);
        r.put("memory_used_bytes", 60 * GIB + g * (1L << 20));
        r.put("memory_free_bytes", 20 * GIB - g * (1L << 20));
        r.put("utilization_ratio", throttled ? 0.99 : 0.97);
        r.put("memory_utilization_ratio", 0.4);
        r.put("sm_clock_hz", throttled ? 705_000_000L : 1_410_000_000L);
        r.put("sm_clock_max_hz", 1_410_000_000L);
        r.put("mem_clock_hz", 1_593_000_000L);
        r.put("mem_clock_max_hz", 1_593_000_000L);
        r.put("clock_event_reasons", throttled ? List.of("hw_slowdown") : List.of());
        r.put("power_watts", 390.5);
        r.put("power_limit_watts", 400.0);
        r.put("energy_joules", 1.0e7 + ts);
        r.put("temperature_celsius", 61.0);
        r.put("pstate", 0);
        r.put("processes", List.of(Map.of("pid", 10_000 + g, "used_memory_bytes", 58 * GIB)));
        return r;
    }

    static String host(int node) {
        return String.format(Locale.ROOT, "bench-node-%06d", node);
    }

    static String uuid(int node, int g) {
        return String.format(Locale.ROOT, "GPU-%08x-0000-4000-8000-%012x", node, g);
    }

    void putSpec(Run run) throws Exception {
        Map<String, Object> spec = Map.of("model", "dit-xl-2", "gpu", "a100-80gb", "gpus", run.nodes() * GPUS_PER_NODE,
                "batch", 32, "resolution", 256, "precision", "bf16", "optimizer", "adamw");
        HttpRequest.Builder request = request("/v1/runs/" + run.id()).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(spec)));
        int status = client.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        answers.computeIfAbsent(1000 + status, s -> new LongAdder()).increment(); // 1200: spec taken, 1429: refused
    }

    int post(String path, byte[] gzipped) throws IOException, InterruptedException {
        HttpRequest request = request(path).header("Content-Type", "application/json")
                .header("Content-Encoding", "gzip")
                .header("Trainwatch-Sent-At", Double.toString(System.currentTimeMillis() / 1000.0))
                .POST(HttpRequest.BodyPublishers.ofByteArray(gzipped)).build();
        long t0 = System.nanoTime();
        int status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        latencyMicros.add((System.nanoTime() - t0) / 1000);
        requests.increment();
        return status;
    }

    HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        return token == null ? b : b.header("Authorization", "Bearer " + token);
    }

    static byte[] gzip(byte[] raw) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length / 8);
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(raw);
        }
        return out.toByteArray();
    }

    /** Asks the collector about the first and the last run until each names its throttled GPU. */
    void watchThrottling() {
        for (Run run : List.of(runs.get(0), runs.get(runs.size() - 1))) {
            if (throttleNamedAfter.containsKey(run.id())) {
                continue;
            }
            try {
                HttpResponse<String> r = client.send(request("/v1/runs/" + run.id()).GET().build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    for (JsonNode a : JSON.readTree(r.body()).path("anomalies")) {
                        if ("throttling".equals(a.path("kind").asText()) && a.path("active").asBoolean()) {
                            throttleNamedAfter.put(run.id(), (System.currentTimeMillis() - start) / 1000.0);
                        }
                    }
                }
            } catch (Exception e) {
                // asked again in 5 s
            }
        }
    }

    void report() {
        long n = requests.sum();
        System.out.printf(Locale.ROOT, "t=%4.0fs requests %d (mean %.1f ms), readings taken %d, answers %s%n",
                (System.currentTimeMillis() - start) / 1000.0, n, n == 0 ? 0 : latencyMicros.sum() / 1000.0 / n,
                readings.sum(), answers);
    }

    void summary() throws Exception {
        report();
        for (Run run : List.of(runs.get(0), runs.get(runs.size() - 1))) {
            Double after = throttleNamedAfter.get(run.id());
            Double first = firstTaken.get(run.firstNode());
            System.out.printf(Locale.ROOT, "throttled GPU 0 of %s on %s: %s%n", run.id(), host(run.firstNode()),
                    after == null ? "NOT named" : String.format(Locale.ROOT, "named within %.0f s of the load's start,"
                            + " %.0f s after its node's first batch was taken", after,
                            after - (first == null ? 0 : first)));
        }
        HttpResponse<String> metrics = client.send(request("/metrics").GET().build(),
                HttpResponse.BodyHandlers.ofString());
        long series = metrics.body().lines().filter(l -> !l.isEmpty() && !l.startsWith("#")).count();
        System.out.printf(Locale.ROOT, "collector /metrics: %d series, %d bytes%n", series, metrics.body().length());
        HttpResponse<String> health = client.send(request("/healthz").GET().build(),
                HttpResponse.BodyHandlers.ofString());
        System.out.println("collector /healthz: " + health.body());
    }
}
