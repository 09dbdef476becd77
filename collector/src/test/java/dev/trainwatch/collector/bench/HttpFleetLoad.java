package dev.trainwatch.collector.bench;

import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.AgentHealth;
import dev.trainwatch.protocol.GpuActivity;
import dev.trainwatch.protocol.GpuProcess;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.HostMemory;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.RankInfo;
import dev.trainwatch.protocol.RunAttribution;
import dev.trainwatch.protocol.StepEvent;
import dev.trainwatch.protocol.UtilizationWindow;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPOutputStream;

/**
 * A fleet of simulated agents feeding a real collector over loopback, for the collector's CPU and memory over HTTP
 * (bench/collector-over-http; docs/PERFORMANCE.md, "Collector: over HTTP"). Not a test.
 *
 * <pre>java -cp cli/target/trainwatch-all.jar:collector/target/test-classes dev.trainwatch.collector.bench.HttpFleetLoad \
 *     URL GPUS SECONDS [RUNS]</pre>
 *
 * <p>GPUS / 8 agents of 8 GPUs each, one batch a second each (the full reading set the agent sends: memory, utilisation
 * with its buffered window, clocks, power, energy, temperature, P-state, one compute process, the GPM and NVLink
 * counters, the run's attribution with its 8 ranks, health, host memory every 5 s), gzip JSON over one HTTP/1.1
 * keep-alive connection per agent, spread evenly over each second; RUNS runs (default GPUS / 8: a run per node), each
 * with one step report a second from its first node. Bounded: stops after SECONDS and closes its sockets.
 *
 * <p>Two variants of the load, as system properties, to see what the number of requests costs (not what agents do
 * today): {@code -Dship.every=N} makes each agent send every N seconds a batch with its last N seconds of samples
 * (8 × N GPU samples, the same 1-Hz readings) and its run's N step reports in one post; {@code -Dstep.reports=false}
 * leaves the step posts out; {@code -Dsteps.in.batch=true} carries them in the batch ({@code run_steps}) instead of a
 * request of their own, as an agent does once its collector takes them; {@code -Dship.spread=true} spreads the agents'
 * batches over the N seconds. {@code -Dmemory.still=true} keeps each GPU's memory in use at one value (see
 * {@link #samples}).
 */
public final class HttpFleetLoad {

    private static final int GPUS_PER_NODE = 8;
    private static final int THREADS = 4;
    /** Seconds of samples per batch (one batch every SHIP_EVERY seconds per agent). */
    private static final int SHIP_EVERY = Math.max(1, Integer.getInteger("ship.every", 1));
    /** {@code -Dmemory.still=true}: memory in use holds still, as a caching allocator keeps it, instead of wobbling. */
    private static final boolean MEMORY_STILL = Boolean.getBoolean("memory.still");
    private static final boolean STEP_REPORTS = Boolean.parseBoolean(System.getProperty("step.reports", "true"));
    private static final boolean STEPS_IN_BATCH = Boolean.getBoolean("steps.in.batch");
    /**
     * {@code -Dship.spread=true}: agent i sends in second i mod N of every N (as agents started at different times
     * do), instead of every agent in the last second of each N (as agents started together do).
     */
    private static final boolean SHIP_SPREAD = Boolean.getBoolean("ship.spread");

    private final String host;
    private final int port;
    private final int agents;
    private final int runs;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong late = new AtomicLong();

    private HttpFleetLoad(URI collector, int gpus, int runs) {
        this.host = collector.getHost();
        this.port = collector.getPort();
        this.agents = gpus / GPUS_PER_NODE;
        this.runs = Math.max(1, Math.min(runs, agents));
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: HttpFleetLoad URL GPUS SECONDS [RUNS]");
            System.exit(2);
        }
        URI url = URI.create(args[0]);
        int gpus = Integer.parseInt(args[1]);
        int seconds = Integer.parseInt(args[2]);
        int runs = args.length > 3 ? Integer.parseInt(args[3]) : gpus / GPUS_PER_NODE;
        new HttpFleetLoad(url, gpus, runs).run(seconds);
    }

    private void run(int seconds) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int first = t;
            Thread thread = new Thread(() -> sendLoop(first, start, end), "load-" + t);
            thread.setDaemon(true);
            thread.start();
            threads.add(thread);
        }
        long report = start;
        while (System.nanoTime() < end) {
            Thread.sleep(1000);
            if (System.nanoTime() - report >= 60_000_000_000L) {
                report = System.nanoTime();
                System.out.printf("t=%ds requests %d, failed %d, sent late %d%n", (report - start) / 1_000_000_000L,
                        sent.get(), failed.get(), late.get());
            }
        }
        for (Thread thread : threads) {
            thread.join(15_000);
        }
        System.out.printf("done: %d agents (%d GPUs), %d runs, %d s: requests %d, failed %d, sent late %d%n", agents,
                agents * GPUS_PER_NODE, runs, seconds, sent.get(), failed.get(), late.get());
    }

    /** Agents first, first + THREADS, …: each sends at its own offset in every second. */
    private void sendLoop(int first, long start, long end) {
        List<Agent> mine = new ArrayList<>();
        for (int a = first; a < agents; a += THREADS) {
            mine.add(new Agent(a));
        }
        try {
            for (long second = 0; ; second++) {
                for (Agent agent : mine) {
                    long due = start + second * 1_000_000_000L + agent.index * 1_000_000_000L / agents;
                    if (due >= end) {
                        return;
                    }
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    } else if (wait < -500_000_000L) {
                        late.incrementAndGet();
                    }
                    if (second % SHIP_EVERY == (SHIP_SPREAD ? agent.index % SHIP_EVERY : SHIP_EVERY - 1)) {
                        agent.send(second);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            mine.forEach(Agent::close);
        }
    }

    /**
     * One second's readings of a node's GPUs as the load sends them (an H100's full reading set, GPM counters
     * included; 90-96 % busy, memory at three quarters and wobbling, or still with {@code -Dmemory.still=true}): also
     * what {@code EvaluationCost} fills its windows with.
     */
    public static List<GpuSample> samples(List<String> uuids, double now, long second, long capacity) {
        List<GpuSample> gpus = new ArrayList<>(uuids.size());
        for (int g = 0; g < uuids.size(); g++) {
            long pid = 10_000 + g;
            double util = 0.9 + 0.01 * ((second + g) % 7);
            long used = capacity * 3 / 4 + (MEMORY_STILL ? 0 : (second % 13) * (1L << 20));
            gpus.add(new GpuSample(now, g, uuids.get(g), "NVIDIA H100 80GB HBM3", String.format("00000000:%02X:00.0", g + 7),
                    capacity, used, 670_040_064L, capacity - used, util, 0.45,
                    new UtilizationWindow(6, util - 0.05, util, Math.min(1.0, util + 0.02), 0.0, now - 1, now),
                    1_980_000_000L, 1_980_000_000L, 2_619_000_000L, 2_619_000_000L, List.of(), 650.0 + g, 700.0,
                    1.0e6 + second * 650.0, 64.0, 0, List.of(new GpuProcess(pid, used - (1L << 30), 0.95, 0.4)),
                    false, new GpuActivity(1.0, util * 0.95, 0.3, util * 0.6, util * 0.55, 0.4, 2.0e9, 1.0e8,
                    4.0e9, 4.0e9, (long) (now * 4.0e9), (long) (now * 4.0e9))));
        }
        return gpus;
    }

    private final class Agent {
        final int index;
        final String node;
        final String runId;
        final boolean reportsSteps;
        final List<String> uuids = new ArrayList<>();
        Socket socket;
        OutputStream out;
        InputStream in;
        long seq;

        Agent(int index) {
            this.index = index;
            this.node = String.format("node-%04d", index);
            int run = index % runs;
            this.runId = String.format("bench-run-%04d", run);
            this.reportsSteps = STEP_REPORTS && index < runs;
            for (int g = 0; g < GPUS_PER_NODE; g++) {
                uuids.add(String.format("GPU-%08x-0000-4000-8000-%012x", index, g));
            }
        }

        void send(long second) {
            double now = System.currentTimeMillis() / 1000.0;
            try {
                List<StepEvent> steps = null;
                if (reportsSteps) {
                    steps = new ArrayList<>(SHIP_EVERY);
                    for (int k = SHIP_EVERY - 1; k >= 0; k--) {
                        steps.add(new StepEvent(second + 1 - k, 0.9, 0.05, null, null, null, GPUS_PER_NODE, 256.0,
                                0.12, 1e-4, 1.1, null, null, null, now - k, null));
                    }
                }
                AgentBatch batch = batch(now, second);
                if (steps != null && STEPS_IN_BATCH) {
                    batch = new AgentBatch(batch.host(), batch.agentId(), batch.seq(), batch.gpus(), batch.runs(),
                            batch.events(), batch.health(), batch.hostMemory(), batch.sentAt(),
                            List.of(new dev.trainwatch.protocol.RunSteps(runId, steps)));
                }
                post("/v1/samples", gzipJson(batch));
                if (steps != null && !STEPS_IN_BATCH) {
                    post("/v1/runs/" + runId + "/steps?agent_id=agent-" + node, gzipJson(steps));
                }
            } catch (IOException e) {
                failed.incrementAndGet();
                close();
            }
        }

        AgentBatch batch(double newest, long newestSecond) {
            List<GpuSample> gpus = new ArrayList<>(GPUS_PER_NODE * SHIP_EVERY);
            List<RankInfo> ranks = new ArrayList<>(GPUS_PER_NODE);
            long capacity = 85_899_345_920L;
            for (int k = SHIP_EVERY - 1; k >= 0; k--) {
                gpus.addAll(samples(newest - k, newestSecond - k, capacity));
            }
            for (int g = 0; g < GPUS_PER_NODE; g++) {
                long pid = 10_000 + g;
                ranks.add(new RankInfo(pid, (index % Math.max(1, agents / runs)) * GPUS_PER_NODE + g, g,
                        GPUS_PER_NODE * Math.max(1, agents / runs), List.of(uuids.get(g))));
            }
            List<Long> pids = ranks.stream().map(RankInfo::pid).toList();
            RunAttribution run = new RunAttribution(runId, pids, List.copyOf(uuids), ranks, "10.0.0.1", null, null, null, null, null, null);
            HostMemory memory = newestSecond % 5 < SHIP_EVERY
                    ? new HostMemory(newest, 1L << 41, 1L << 40, 0L, 1L << 39, 1L << 33) : null;
            return new AgentBatch(node, "agent-" + node, ++seq, gpus, List.of(run), List.of(),
                    new AgentHealth(0.004, 0L, 0L, 0L, 0L, 1.0), memory, newest, null);
        }

        /** One second's readings of the node's GPUs. */
        List<GpuSample> samples(double now, long second, long capacity) {
            return HttpFleetLoad.samples(uuids, now, second, capacity);
        }

        void post(String path, byte[] body) throws IOException {
            if (socket == null) {
                socket = new Socket();
                socket.setTcpNoDelay(true);
                socket.setSoTimeout(30_000);
                socket.connect(new InetSocketAddress(host, port), 5_000);
                out = socket.getOutputStream();
                in = new BufferedInputStream(socket.getInputStream(), 4096);
            }
            String head = "POST " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
                    + "\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: " + body.length
                    + "\r\n\r\n";
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            int status = readResponse();
            sent.incrementAndGet();
            if (status / 100 != 2) {
                failed.incrementAndGet();
            }
        }

        /** The status; reads the headers and the body (Content-Length) so the connection can be reused. */
        int readResponse() throws IOException {
            String statusLine = line();
            int status = Integer.parseInt(statusLine.split(" ")[1]);
            int length = 0;
            boolean close = false;
            for (String header = line(); !header.isEmpty(); header = line()) {
                String lower = header.toLowerCase(java.util.Locale.ROOT);
                if (lower.startsWith("content-length:")) {
                    length = Integer.parseInt(lower.substring(15).strip());
                } else if (lower.startsWith("connection:") && lower.contains("close")) {
                    close = true;
                }
            }
            in.readNBytes(length);
            if (close) {
                close();
            }
            return status;
        }

        String line() throws IOException {
            StringBuilder b = new StringBuilder();
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new IOException("connection closed");
                }
                if (c != '\r') {
                    b.append((char) c);
                }
            }
            return b.toString();
        }

        void close() {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing
                }
                socket = null;
            }
        }
    }

    static byte[] gzipJson(Object value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(4096);
        try (GZIPOutputStream gzip = new GZIPOutputStream(bytes, 4096)) {
            Json.MAPPER.writeValue(gzip, value);
        }
        return bytes.toByteArray();
    }
}
