package dev.trainwatch.collector.bench;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorStack;
import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.StepEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What two live runs see while junk floods the collector (a benchmark, not a test): a real collector with a data
 * directory (history in SQLite) on loopback; a flood client posts agent batches that bring new runs (3,000 run ids
 * over the measurement, far past the 1,024-run limit, so the collector refuses and forgets as it goes); two live
 * agents post an 8-GPU batch and a step report each second; a scraper asks for {@code /metrics} each second as
 * Prometheus does (OpenMetrics, gzip-compressed unless {@code -Dgzip=false}). Prints the live agents' ingest latency and the scrapes' latency (p50, p99, max).
 *
 * <p>{@code ./mvnw -B -q install -DskipTests} once, then
 * {@code ./mvnw -B -q -pl collector exec:exec -Dexec.executable=java -Dexec.classpathScope=test
 * "-Dexec.args=-Xmx384m -XX:+UseSerialGC -cp %classpath dev.trainwatch.collector.bench.FloodLatency 60"}
 * (the argument: seconds measured, after 10 s of warm-up).
 */
public final class FloodLatency {
    private static final int FLOOD_RUNS = 3_000;
    private static final int RUNS_PER_FLOOD_BATCH = 10;
    /** Ask for a gzip-compressed scrape, as Prometheus does ({@code -Dgzip=false} for the plain text). */
    private static final boolean GZIP = !"false".equals(System.getProperty("gzip"));

    private FloodLatency() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
        Path dataDir = Files.createTempDirectory("trainwatch-flood");
        CollectorConfig config = CollectorConfig.defaults().withListen("127.0.0.1", 0).withDataDir(dataDir);
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        List<Long> ingest = Collections.synchronizedList(new ArrayList<>());
        List<Long> scrape = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong floodBatches = new AtomicLong();
        AtomicLong scrapeBytes = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<byte[]> lastScrape = new java.util.concurrent.atomic.AtomicReference<>();
        try (CollectorStack stack = CollectorStack.start(config, line -> { })) {
            URI base = stack.server().uri();
            ExecutorService threads = Executors.newFixedThreadPool(4);
            // The flood: as fast as one client can, new runs every batch, wrapping after 3,000 run ids.
            threads.submit(() -> {
                long seq = 0;
                int next = 0;
                while (!stop.get()) {
                    double ts = System.currentTimeMillis() / 1000.0;
                    List<dev.trainwatch.protocol.GpuSample> gpus = new ArrayList<>();
                    List<dev.trainwatch.protocol.RunAttribution> runs = new ArrayList<>();
                    for (int i = 0; i < RUNS_PER_FLOOD_BATCH; i++, next = (next + 1) % FLOOD_RUNS) {
                        String uuid = "GPU-flood-" + next;
                        gpus.add(Payloads.sample(ts, i, uuid, 10L << 30, 0.5, List.of()));
                        runs.add(new dev.trainwatch.protocol.RunAttribution("junk-" + next, List.of(1000L + next),
                                List.of(uuid), null, null, null, null, null, null, null, null));
                    }
                    AgentBatch batch = new AgentBatch("flood-node", "flood-agent", ++seq, gpus, runs, List.of(),
                            null, null, null, null);
                    send(http, post(base, "/v1/samples", Payloads.json(batch)));
                    floodBatches.incrementAndGet();
                }
                return null;
            });
            for (int live = 0; live < 2; live++) {
                String host = "live-node-" + live;
                String run = "live-run-" + live;
                threads.submit(() -> {
                    long seq = 0;
                    long step = 0;
                    while (!stop.get()) {
                        long start = System.nanoTime();
                        double ts = System.currentTimeMillis() / 1000.0;
                        send(http, post(base, "/v1/samples", Payloads.json(Payloads.batch(host, ++seq, ts, 8, run))));
                        long took = System.nanoTime() - start;
                        send(http, post(base, "/v1/runs/" + run + "/steps",
                                Payloads.json(List.of(StepEvent.of(++step, 1.0, ts)))));
                        if (measuring.get()) {
                            ingest.add(took);
                        }
                        Thread.sleep(Math.max(0, 1000 - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
                    }
                    return null;
                });
            }
            threads.submit(() -> {
                while (!stop.get()) {
                    long start = System.nanoTime();
                    HttpResponse<byte[]> answer = http.send(HttpRequest.newBuilder(base.resolve("/metrics"))
                            .timeout(Duration.ofSeconds(60))
                            .header("Accept", "application/openmetrics-text;version=1.0.0,text/plain;q=0.5")
                            .header("Accept-Encoding", GZIP ? "gzip" : "identity").build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    long took = System.nanoTime() - start;
                    if (measuring.get()) {
                        scrape.add(took);
                        scrapeBytes.set(answer.body().length);
                        lastScrape.set(answer.body());
                    }
                    Thread.sleep(Math.max(0, 1000 - TimeUnit.NANOSECONDS.toMillis(took)));
                }
                return null;
            });
            Thread.sleep(10_000);
            measuring.set(true);
            long floodBefore = floodBatches.get();
            Thread.sleep(seconds * 1000L);
            measuring.set(false);
            long flooded = floodBatches.get() - floodBefore;
            stop.set(true);
            threads.shutdown();
            threads.awaitTermination(60, TimeUnit.SECONDS);
            System.out.printf(Locale.ROOT, "flood: %d batches (%d new run ids) in %d s while measured; collector"
                    + " tracks %d runs%n", flooded, flooded * RUNS_PER_FLOOD_BATCH, seconds,
                    stack.server().fleet().counts().runs());
            print("live ingest (POST /v1/samples, 8 GPUs)", ingest);
            print("scrape (GET /metrics, OpenMetrics" + (GZIP ? ", gzip)" : ")"), scrape);
            System.out.printf(Locale.ROOT, "last scrape: %,d bytes as sent%n", scrapeBytes.get());
            if (!GZIP && lastScrape.get() != null) {
                describe(lastScrape.get());
            }
        }
    }

    /** The plain scrape's samples, and what gzip costs for it at the fastest level and at zlib's default. */
    private static void describe(byte[] text) throws java.io.IOException {
        String exposition = new String(text, java.nio.charset.StandardCharsets.UTF_8);
        long samples = exposition.lines().filter(line -> !line.startsWith("#")).count();
        long clockEvents = exposition.lines().filter(line -> line.startsWith("trainwatch_gpu_clock_event_active{"))
                .count();
        System.out.printf(Locale.ROOT, "last scrape: %,d samples, %,d of them trainwatch_gpu_clock_event_active%n",
                samples, clockEvents);
        for (int level : new int[] {java.util.zip.Deflater.BEST_SPEED, java.util.zip.Deflater.DEFAULT_COMPRESSION}) {
            long best = Long.MAX_VALUE;
            int size = 0;
            for (int round = 0; round < 5; round++) {
                long start = System.nanoTime();
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(text.length / 16);
                java.util.zip.Deflater deflater = new java.util.zip.Deflater(level, true);
                try (java.util.zip.DeflaterOutputStream zip = new java.util.zip.DeflaterOutputStream(out, deflater,
                        64 * 1024)) {
                    zip.write(text);
                }
                deflater.end();
                best = Math.min(best, System.nanoTime() - start);
                size = out.size();
            }
            System.out.printf(Locale.ROOT, "deflate level %s: %.1f ms (best of 5), %,d bytes%n",
                    level == java.util.zip.Deflater.BEST_SPEED ? "1" : "6 (default)", best / 1e6, size);
        }
    }

    private static HttpRequest post(URI base, String path, byte[] body) {
        return HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    }

    private static void send(HttpClient http, HttpRequest request) throws Exception {
        http.send(request, HttpResponse.BodyHandlers.discarding());
    }

    private static void print(String what, List<Long> nanos) {
        List<Long> sorted = new ArrayList<>(nanos);
        Collections.sort(sorted);
        if (sorted.isEmpty()) {
            System.out.println(what + ": no samples");
            return;
        }
        System.out.printf(Locale.ROOT, "%-42s n=%4d  p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms%n", what, sorted.size(),
                ms(sorted, 0.50), ms(sorted, 0.99), sorted.get(sorted.size() - 1) / 1e6);
    }

    private static double ms(List<Long> sorted, double q) {
        int i = (int) Math.min(sorted.size() - 1, Math.ceil(q * sorted.size()) - 1);
        return sorted.get(Math.max(0, i)) / 1e6;
    }
}
