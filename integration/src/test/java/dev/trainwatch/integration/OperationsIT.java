package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Operations as an operator meets them (issue 19): real {@code trainwatch agent} and {@code trainwatch collector}
 * processes from the built jar, killed at random with SIGKILL and SIGTERM while two training logs are appended to at
 * a steady pace, and at the end every logged step is counted exactly once.
 *
 * <p>Two nodes, each an agent reading the fake NVML library:
 * <ul>
 *   <li>{@code node-a} runs with {@code TZ=Asia/Shanghai} while its DiT log is written in UTC (as a container
 *       writes it); the log is rotated (renamed, a new file created), and a second run is appended to the new file
 *       (DiT's appending logger: the step counter starts over);</li>
 *   <li>{@code node-b} sends three polls' readings at a time ({@code --ship-every 3s}), runs with its clock 15
 *       minutes behind (libfaketime, Debian's {@code faketime} package),
 *       reads its log through a symlink that is swapped to another file and back, and that is replaced by a FIFO
 *       for a while; its spool is seeded with entries no agent wrote (a directory, a non-gzip file, 200 MB).</li>
 * </ul>
 * The agents talk to the collector through a small recording proxy, which sees every batch and its answer. The
 * collector's wall clock is stepped an hour ahead halfway through phase A and back at its end (libfaketime, its
 * monotonic clock untouched, as NTP steps a clock): nothing may be raised, and its exported times must follow its wall
 * clock.
 *
 * <p>Phase A kills the agents ({@code trainwatch.ops.kills} times, SIGKILL or SIGTERM at random; SIGTERM must exit
 * 0) with one collector: its {@code trainwatch_run_step_seconds_count} must equal the steps logged. Phase B kills
 * the collector as many times, alternating two ways: the proxy stops taking requests, the count of the collector
 * is read, and it is killed; or a steps request is applied by the collector and its answer is lost (the proxy
 * answers 503 instead and the collector is killed), so the agent sends it again to the restarted collector, which
 * must drop it. The counts of all collector lifetimes add up to the steps logged. Throughout: no {@code stalled}
 * anomaly on either run, and the GPU batches of a running agent are never more than two poll intervals (or two of its
 * {@code --ship-every}) apart; in
 * phase B no batch of either agent is lost.
 *
 * <p>It runs beside the other integration tests (its processes mostly wait between kills; about 150 s of CPU in
 * three to four minutes). CI runs {@value #DEFAULT_KILLS} kills of each, the run the issue asks for;
 * {@code -Dtrainwatch.ops.kills=N} sets another count.
 */
@Execution(ExecutionMode.CONCURRENT)
class OperationsIT {

    static final int DEFAULT_KILLS = 20;
    static final int KILLS = Integer.getInteger("trainwatch.ops.kills", DEFAULT_KILLS);
    static final Duration INTERVAL = Duration.ofSeconds(1);
    static final String FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
    static final DateTimeFormatter DIT_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    @TempDir
    Path dir;

    final Random random = new Random(Long.getLong("trainwatch.ops.seed", System.nanoTime()));
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    final List<String> problems = Collections.synchronizedList(new ArrayList<>());
    final Set<String> stalledSeen = ConcurrentHashMap.newKeySet();

    Path jar;
    Path fakeNvml;
    /** libfaketime's offset for the collector's wall clock ("+0", "+3600"). */
    Path collectorWallClock;
    Process collector;
    int collectorPort;
    RecordingProxy proxy;
    Node nodeA;
    Node nodeB;
    final List<Thread> threads = new ArrayList<>();
    volatile boolean stopping;
    volatile long wallStepped;
    /** Set once phase A has stepped the collector's wall clock ahead and back; later collectors run unfaked. */
    volatile Boolean collectorWallClockStepped;

    @AfterEach
    void tearDown() throws Exception {
        stopping = true;
        for (Thread t : threads) {
            t.interrupt();
            t.join(10_000);
        }
        for (Node n : new Node[] {nodeA, nodeB}) {
            if (n != null && n.process != null) {
                n.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (collector != null) {
            collector.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    /** One node: an agent process, its spool, its log, and the thread that writes the log. */
    final class Node {
        final String name;
        final String runId;
        final Path home;
        final Path spool;
        final Path logPath;
        final Map<String, String> env = new HashMap<>();
        volatile Process process;
        /** The agent's {@code --ship-every}, or null: a batch every poll. */
        Duration shipEvery;
        /** Nanos at which this node's agent was stopped: gaps in its batches spanning one are excused. */
        final List<long[]> downtimes = Collections.synchronizedList(new ArrayList<>());
        int starts;

        Node(String name, Path logPath) throws IOException {
            this.name = name;
            this.runId = "ops-" + name;
            this.home = Files.createDirectories(dir.resolve(name));
            this.spool = home.resolve("spool");
            this.logPath = logPath;
        }

        void start() throws IOException {
            List<String> command = new ArrayList<>(List.of(javaBin(), "-Xmx64m", "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1", "-jar", jar.toString(), "agent",
                    "--collector", "http://127.0.0.1:" + proxy.port(), "--interval", INTERVAL.toMillis() + "ms",
                    "--nvml-library", fakeNvml.toString(), "--spool-dir", spool.toString(), "--host", name,
                    "--run-id", runId, "--log", logPath.toString(), "--log-format", "dit"));
            if (shipEvery != null) {
                command.addAll(List.of("--ship-every", shipEvery.toMillis() + "ms"));
            }
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("agent.log").toFile()));
            builder.environment().putAll(env);
            process = builder.start();
            starts++;
            // Signals are the agent's once its main runs; before that (the JVM's own start) SIGTERM is the JVM's 143.
            int expected = starts;
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                    .until(() -> Files.exists(home.resolve("agent.log")) && Files.readString(home.resolve("agent.log"))
                            .lines().filter(l -> l.contains("polling every")).count() >= expected);
        }

        /** Stops the agent with SIGTERM (must exit 0) or SIGKILL, then starts it again. */
        void restart(boolean sigkill) throws Exception {
            long down = System.nanoTime();
            Process p = process;
            if (sigkill) {
                p.destroyForcibly();
                assertThat(p.waitFor(30, TimeUnit.SECONDS)).as(name + " exits on SIGKILL").isTrue();
            } else {
                p.destroy();
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    problems.add(name + ": no exit within 30 s of SIGTERM");
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                } else if (p.exitValue() != 0) {
                    problems.add(name + ": SIGTERM exit status " + p.exitValue() + " (AGENT.md: 0)");
                }
            }
            long exited = System.nanoTime();
            start();
            downtimes.add(new long[] {down, System.nanoTime()});
            System.out.printf(Locale.ROOT, "%s   %s exited in %.2f s, polling %.2f s later%n", t(), name,
                    (exited - down) / 1e9, (System.nanoTime() - exited) / 1e9);
        }

        String logTail() {
            try {
                List<String> lines = Files.readAllLines(home.resolve("agent.log"));
                return name + " agent log (last 40 lines):\n"
                        + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
            } catch (IOException e) {
                return name + ": " + e.getMessage();
            }
        }
    }

    /**
     * Appends DiT lines at a steady pace (one every 0.3 to 0.9 s) and performs the node's file events at given
     * line counts. Counts every line written: each is a step the collector must count once.
     */
    abstract class Writer implements Runnable {
        volatile boolean paused;
        volatile boolean idle;
        volatile int written;
        long step;

        abstract Path target();

        /** The node's file events, before line {@code n} is written; true when all are done. */
        abstract boolean events(int n) throws Exception;

        volatile boolean eventsDone;
        final List<Long> stepsWritten = Collections.synchronizedList(new ArrayList<>());

        List<Long> steps() {
            synchronized (stepsWritten) {
                return List.copyOf(stepsWritten);
            }
        }

        @Override
        public void run() {
            try {
                while (!stopping) {
                    if (paused) {
                        idle = true;
                        Thread.sleep(50);
                        continue;
                    }
                    idle = false;
                    eventsDone = events(written);
                    if (paused) {
                        continue;
                    }
                    step++;
                    String line = String.format(Locale.ROOT,
                            "[%s] (step=%07d) Train Loss: 0.%04d, Train Steps/Sec: 2.00%n",
                            DIT_TIME.format(Instant.now()), step, 1000 + random.nextInt(9000));
                    Files.writeString(target(), line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                    stepsWritten.add(step);
                    written++;
                    Thread.sleep(300 + random.nextInt(600));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                problems.add("writer failed: " + e);
            }
        }

        /** Stops writing and waits until no line is being written. */
        void pause() {
            paused = true;
            await().atMost(Duration.ofSeconds(10)).until(() -> idle);
        }

        void resume() {
            paused = false;
        }
    }

    /** node-a: rotation after 12 lines, a second run (steps from 1 again) appended after 24. */
    final class RotatingWriter extends Writer {
        final Path log;

        RotatingWriter(Path log) {
            this.log = log;
        }

        @Override
        Path target() {
            return log;
        }

        @Override
        boolean events(int n) throws IOException {
            if (n == 12) {
                Files.move(log, log.resolveSibling(log.getFileName() + ".1")); // logrotate's rename; a new file
            }
            if (n == 24 && step > 1) {
                step = 0; // DiT started again, appending to the same file
            }
            return n >= 24;
        }
    }

    /**
     * node-b: its log path is a symlink to run-1.log; after 8 lines it is swapped to run-2.log, after 16 back to
     * run-1.log, after 22 replaced by a FIFO for 3 s (the lines of that time still go to run-1.log), then the
     * symlink again.
     */
    final class SwappingWriter extends Writer {
        final Path link;
        final Path run1;
        final Path run2;
        Path current;

        SwappingWriter(Path link, Path run1, Path run2) {
            this.link = link;
            this.run1 = run1;
            this.run2 = run2;
            this.current = run1;
        }

        @Override
        Path target() {
            return current;
        }

        @Override
        boolean events(int n) throws Exception {
            if (n == 8 && current == run1) {
                swap(run2);
            } else if (n == 16 && current == run2) {
                swap(run1);
            } else if (n == 22 && !fifoDone) {
                fifoDone = true;
                Files.delete(link);
                mkfifo(link);
                // At least 3 s, and until the agent has met it (it may be restarting when the FIFO appears; on a
                // loaded machine a JVM start takes longer than that), at most a minute.
                long shortest = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                long longest = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!stopping && System.nanoTime() < longest
                        && (System.nanoTime() < shortest || !agentMetFifo())) {
                    Files.writeString(run1, String.format(Locale.ROOT,
                            "[%s] (step=%07d) Train Loss: 0.5000, Train Steps/Sec: 2.00%n",
                            DIT_TIME.format(Instant.now()), ++step), StandardOpenOption.APPEND);
                    written++;
                    Thread.sleep(500);
                }
                Files.delete(link);
                Files.createSymbolicLink(link, run1);
            }
            return n >= 22 && fifoDone;
        }

        boolean fifoDone;

        boolean agentMetFifo() throws IOException {
            Path log = nodeB.home.resolve("agent.log");
            return Files.exists(log) && Files.readString(log).contains("is a FIFO, not a regular file");
        }

        void swap(Path to) throws IOException {
            Path temp = link.resolveSibling("link.tmp");
            Files.deleteIfExists(temp);
            Files.createSymbolicLink(temp, to);
            Files.move(temp, link, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            current = to;
        }
    }

    static void mkfifo(Path path) throws Exception {
        Process p = new ProcessBuilder("mkfifo", path.toString()).redirectErrorStream(true).start();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail("mkfifo " + path + " failed");
        }
    }

    long started;

    /** Seconds since the test started, for the progress lines. */
    String t() {
        return String.format(Locale.ROOT, "%6.1f s", (System.nanoTime() - started) / 1e9);
    }

    static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    // ---- the collector ------------------------------------------------------------------------------------------

    void startCollector() throws Exception {
        Path data = dir.resolve("collector-data");
        ProcessBuilder pb = new ProcessBuilder(CollectorJvm.command(jar,
                List.of("-Xmx256m", "-Dtrainwatch.collector.warmUp=false"),
                "--listen", "127.0.0.1:" + collectorPort, "--data-dir", data.toString()));
        // The collector host's wall clock, which the test steps (libfaketime re-reads the file every second); its
        // monotonic clock is left alone, as NTP or an operator leaves it.
        // Phase A's collector only: libfaketime that leaves the monotonic clock alone costs every clock read.
        if (collectorWallClockStepped == null) {
            pb.environment().put("LD_PRELOAD", FAKETIME_LIB);
            pb.environment().put("FAKETIME_TIMESTAMP_FILE", collectorWallClock.toString());
            pb.environment().put("FAKETIME_CACHE_DURATION", "1");
            pb.environment().put("DONT_FAKE_MONOTONIC", "1");
            // libfaketime 0.9.10 otherwise applies its pthread_cond_timedwait "monotonic fix" to the JVM's timed
            // waits, which then return at once and spin: the faked collector took 30 s and 33 s of CPU to answer
            // /healthz instead of 2 s and 3 s, and used a core from then on (wolfcw/libfaketime#425). Without the fix
            // the wall clock is still stepped and the monotonic clock left alone.
            pb.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
        }
        collector = pb.redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("collector.log").toFile()))
                .start();
        long begun = System.nanoTime();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> get("/healthz").statusCode() == 200);
        System.out.printf(Locale.ROOT, "%s   collector healthy %.2f s after its start%n", t(),
                (System.nanoTime() - begun) / 1e9);
    }

    void stopCollector(boolean sigkill) throws Exception {
        Process p = collector;
        if (sigkill) {
            p.destroyForcibly();
        } else {
            p.destroy();
        }
        long stopped = System.nanoTime();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            problems.add("collector did not exit within 60 s of " + (sigkill ? "SIGKILL" : "SIGTERM"));
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        System.out.printf(Locale.ROOT, "%s   collector exited in %.2f s%n", t(), (System.nanoTime() - stopped) / 1e9);
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + collectorPort + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The newest {@code trainwatch_agent_last_seen_timestamp_seconds} minus this host's time now. */
    double lastSeenLead() throws IOException, InterruptedException {
        double newest = Double.NEGATIVE_INFINITY;
        for (String line : get("/metrics").body().lines().toList()) {
            if (line.startsWith("trainwatch_agent_last_seen_timestamp_seconds{")) {
                newest = Math.max(newest, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
            }
        }
        return newest - System.currentTimeMillis() / 1000.0;
    }

    /** {@code trainwatch_run_step_seconds_count} by run, from the collector's scrape. */
    Map<String, Double> stepCounts() throws IOException, InterruptedException {
        Map<String, Double> counts = new TreeMap<>();
        for (String line : get("/metrics").body().lines().toList()) {
            if (line.startsWith("trainwatch_run_step_seconds_count{")) {
                int at = line.indexOf("run_id=\"") + 8;
                String run = line.substring(at, line.indexOf('"', at));
                counts.put(run, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
            }
        }
        return counts;
    }

    /**
     * Watches the runs for a {@code stalled} or {@code agent_lost} anomaly, once a second, whatever the collector's
     * lifetime.
     */
    void watchForStalled() {
        Thread t = new Thread(() -> {
            while (!stopping) {
                for (Node n : new Node[] {nodeA, nodeB}) {
                    try {
                        HttpResponse<String> r = get("/v1/runs/" + n.runId);
                        if (r.statusCode() == 200) {
                            for (JsonNode a : Json.MAPPER.readTree(r.body()).path("anomalies")) {
                                String kind = a.path("kind").asText();
                                if ("stalled".equals(kind) || "agent_lost".equals(kind)) {
                                    stalledSeen.add(n.runId + ": " + a);
                                }
                            }
                        }
                    } catch (IOException | RuntimeException e) {
                        // The collector is being restarted.
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "ops-stalled-watch");
        t.setDaemon(true);
        t.start();
        threads.add(t);
    }

    // ---- the test -----------------------------------------------------------------------------------------------

    @Test
    void everyLoggedStepIsCountedOnceThroughRandomKillsOfAgentsAndCollector() throws Exception {
        jar = ProjectFiles.root().resolve("cli/target/trainwatch-all.jar");
        assertThat(jar).as("the shaded jar (built by the cli module's package phase)").exists();
        fakeNvml = ProjectFiles.root().resolve("agent/target/fake-nvml/libnvidia-ml.so.1");
        assertThat(fakeNvml).as("the fake NVML library (built by the agent module's tests)").exists();
        if (!Files.exists(Path.of(FAKETIME_LIB))) {
            fail("libfaketime is missing: run `bash .ci/install-deps` (Debian package faketime)");
        }
        started = System.nanoTime();
        System.out.printf(Locale.ROOT, "OperationsIT: %d kills of each%n", KILLS);

        collectorPort = PeerProcess.freePort();
        collectorWallClock = dir.resolve("collector-wall-clock");
        Files.writeString(collectorWallClock, "+0\n");
        startCollector();
        proxy = new RecordingProxy(URI.create("http://127.0.0.1:" + collectorPort));

        Path scenario = dir.resolve("node.scenario");
        Files.writeString(scenario, String.join("\n",
                "0 - driver 535.261.03",
                "0 0 uuid GPU-0a0a0a0a-2222-3333-4444-555555555555",
                "0 0 name NVIDIA A100-SXM4-80GB",
                "0 * memory_total 85899345920",
                "0 * memory_used 42949672960",
                "0 * util_gpu 97",
                "0 * power_mw 312500",
                "") + "\n");

        // node-a: a UTC log under another time zone, rotated.
        Path logA = Files.createDirectories(dir.resolve("node-a-logs")).resolve("log.txt");
        nodeA = new Node("node-a", logA);
        nodeA.env.put("TZ", "Asia/Shanghai");
        nodeA.env.put("FAKE_NVML_SCENARIO", scenario.toString());
        RotatingWriter writerA = new RotatingWriter(logA);

        // node-b: clock 15 minutes behind, a symlink swapped and replaced by a FIFO, a spool with bad entries.
        Path logsB = Files.createDirectories(dir.resolve("node-b-logs"));
        Path link = logsB.resolve("current.log");
        Files.writeString(logsB.resolve("run-1.log"), "[" + DIT_TIME.format(Instant.now())
                + "] Experiment directory created at results/000-DiT-XL-2\n");
        Files.writeString(logsB.resolve("run-2.log"), "[" + DIT_TIME.format(Instant.now())
                + "] Experiment directory created at results/001-DiT-XL-2\n");
        Files.createSymbolicLink(link, logsB.resolve("run-1.log"));
        nodeB = new Node("node-b", link);
        // node-b sends three polls' readings and steps at a time: the steps it holds when SIGKILLed are read again
        // by the next agent (their log position was not committed) and counted once.
        nodeB.shipEvery = Duration.ofSeconds(3);
        nodeB.env.put("LD_PRELOAD", FAKETIME_LIB);
        nodeB.env.put("FAKETIME", "-15m");
        nodeB.env.put("FAKE_NVML_SCENARIO", scenario.toString());
        seedBadSpoolEntries(nodeB.spool);
        SwappingWriter writerB = new SwappingWriter(link, logsB.resolve("run-1.log"), logsB.resolve("run-2.log"));

        for (Writer w : new Writer[] {writerA, writerB}) {
            Thread t = new Thread(w, "ops-writer");
            t.setDaemon(true);
            threads.add(t);
        }
        nodeA.start();
        nodeB.start();
        threads.forEach(Thread::start);
        watchForStalled();

        try {
            // ---- phase A: the agents are killed; one collector counts.
            for (int i = 0; i < KILLS; i++) {
                Thread.sleep(1000 + random.nextInt(2000));
                Node n = random.nextBoolean() ? nodeA : nodeB;
                boolean sigkill = random.nextBoolean();
                System.out.printf(Locale.ROOT, "%s phase A: %s %s%n", t(), sigkill ? "SIGKILL" : "SIGTERM", n.name);
                n.restart(sigkill);
                if (i == KILLS / 2) {
                    // NTP (or an operator) steps the collector's wall clock an hour ahead while the runs go on.
                    System.out.println(t() + " phase A: the collector's wall clock is stepped an hour ahead");
                    Files.writeString(collectorWallClock, "+3600\n");
                    wallStepped = System.nanoTime();
                }
            }
            if (wallStepped != 0) {
                // Its exported times follow its wall clock, so Prometheus' time() minus them stays an age.
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                        assertThat(lastSeenLead()).as("trainwatch_agent_last_seen_timestamp_seconds minus this "
                                + "host's time, with the collector's wall clock an hour ahead").isBetween(3590.0, 3610.0));
                // And stepped back an hour before the agents' last lines.
                System.out.println(t() + " phase A: the collector's wall clock is stepped back");
                Files.writeString(collectorWallClock, "+0\n");
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() ->
                        assertThat(lastSeenLead()).as("the same after it was stepped back").isBetween(-10.0, 10.0));
                collectorWallClockStepped = true;
            }
            await().atMost(Duration.ofSeconds(120)).until(() -> writerA.eventsDone && writerB.eventsDone);
            writerA.pause();
            writerB.pause();
            Map<String, Double> phaseA = awaitCounts(Map.of(), writerA, writerB);
            // And it stays so: nothing is counted late, while the agents go on polling.
            long batches = proxy.batchCount();
            await().atMost(Duration.ofSeconds(30)).until(() -> proxy.batchCount() >= batches + 6);
            assertThat(stepCounts()).as("counts a few polls later").isEqualTo(phaseA);
            System.out.printf(Locale.ROOT, "%s phase A: %s for %d + %d lines logged%n", t(), phaseA, writerA.written,
                    writerB.written);

            // ---- phase B: the collector is killed; the agents go on.
            writerA.resume();
            writerB.resume();
            long phaseBStart = proxy.batchCount();
            Map<String, Double> earlierLives = new TreeMap<>();
            for (int i = 0; i < KILLS; i++) {
                Thread.sleep(1500 + random.nextInt(2000));
                boolean sigkill = random.nextBoolean();
                Map<String, Double> last;
                if (i % 2 == 0) {
                    System.out.printf(Locale.ROOT, "%s phase B: %s the collector, quiet%n", t(), sigkill ? "SIGKILL" : "SIGTERM");
                    proxy.pauseAndDrain(Duration.ofSeconds(20));
                    last = stepCounts();
                    stopCollector(sigkill);
                } else {
                    System.out.printf(Locale.ROOT, "%s phase B: %s the collector after it applied steps whose answer "
                            + "is lost%n", t(), sigkill ? "SIGKILL" : "SIGTERM");
                    last = proxy.cutOffNextSteps(() -> {
                        Map<String, Double> counts = stepCounts();
                        stopCollector(sigkill);
                        return counts;
                    }, Duration.ofSeconds(60));
                }
                last.forEach((run, count) -> earlierLives.merge(run, count, Double::sum));
                startCollector();
                proxy.resume();
            }
            writerA.pause();
            writerB.pause();
            awaitCounts(earlierLives, writerA, writerB);
            System.out.println(t() + " phase B: every step counted once");
            assertThat(proxy.cutOffs()).as("answers lost after the collector applied steps").isEqualTo(KILLS / 2);

            // ---- throughout
            assertThat(problems).as(nodeA.logTail() + "\n" + nodeB.logTail()).isEmpty();
            assertThat(stalledSeen).as("stalled or agent_lost anomalies").isEmpty();
            assertBatchesEveryTwoIntervals(nodeA);
            assertBatchesEveryTwoIntervals(nodeB);
            assertNoBatchLostSince(phaseBStart);
            assertThat(Files.readString(dir.resolve("collector.log"))).as("the clock of node-b, said once per "
                    + "collector lifetime").contains("its clock is 9");
            String logB = Files.readString(nodeB.home.resolve("agent.log"));
            assertThat(logB).as("node-b refused the FIFO").contains("is a FIFO, not a regular file");
            assertThat(logB.lines().filter(l -> l.contains("cannot be replayed"))).as("bad spool entries moved aside")
                    .hasSize(3);
            for (Node n : new Node[] {nodeA, nodeB}) {
                assertThat(Files.readString(n.home.resolve("agent.log"))).as(n.name)
                        .doesNotContain("poll failed").doesNotContain("delivery hit an unexpected error")
                        .doesNotContain("Exception");
            }
        } catch (AssertionError | Exception e) {
            System.out.println(nodeA.logTail());
            System.out.println(nodeB.logTail());
            throw e;
        }
    }

    /**
     * Waits until the collector's counts plus those of its earlier lifetimes equal the lines written, then
     * asserts it (a count above the lines is a step counted twice, and fails at once).
     */
    Map<String, Double> awaitCounts(Map<String, Double> earlierLives, Writer a, Writer b) {
        Map<String, Double> expected = Map.of(nodeA.runId, (double) a.written, nodeB.runId, (double) b.written);
        Map<String, Double> total = new TreeMap<>();
        try {
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).until(() -> {
                Map<String, Double> now = stepCounts();
                total.clear();
                for (String run : expected.keySet()) {
                    total.put(run, now.getOrDefault(run, 0.0) + earlierLives.getOrDefault(run, 0.0));
                    if (total.get(run) > expected.get(run)) {
                        throw new AssertionError("run " + run + " counted " + total.get(run) + " steps for "
                                + expected.get(run) + " lines logged\n" + stepsSent(a, b));
                    }
                }
                return total.equals(expected);
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            assertThat(total).as("steps counted (all collector lifetimes) against lines logged\n"
                    + stepsSent(a, b)).isEqualTo(expected);
        }
        return new TreeMap<>(expected);
    }

    /**
     * What each writer wrote and what the agents sent, for a count that does not add up: per run, the step numbers
     * of the lines in order, then per source the steps forwarded with the collector's answers.
     */
    String stepsSent(Writer a, Writer b) {
        StringBuilder out = new StringBuilder();
        for (Writer w : new Writer[] {a, b}) {
            out.append(w == a ? nodeA.runId : nodeB.runId).append(" lines: ").append(ranges(w.steps())).append('\n');
        }
        Map<String, Map<String, List<Long>>> byRun = new TreeMap<>();
        for (RecordingProxy.StepPost p : proxy.stepPosts()) {
            String run = p.path().replaceFirst("^/v1/runs/", "").replaceFirst("/steps.*$", "");
            byRun.computeIfAbsent(run, k -> new java.util.LinkedHashMap<>())
                    .computeIfAbsent(p.source() + " rank " + p.rank() + " status " + p.status(), k -> new ArrayList<>())
                    .add(p.step());
        }
        byRun.forEach((run, sources) -> sources.forEach((source, steps) ->
                out.append(run).append(" sent ").append(source).append(": ").append(ranges(steps)).append('\n')));
        return out.toString();
    }

    /** 1,2,3,5,6 as "1-3 5-6", in the order given. */
    static String ranges(List<Long> steps) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < steps.size(); i++) {
            int j = i;
            while (j + 1 < steps.size() && steps.get(j + 1) == steps.get(j) + 1) {
                j++;
            }
            out.append(steps.get(i));
            if (j > i) {
                out.append('-').append(steps.get(j));
            }
            out.append(' ');
            i = j;
        }
        return out.toString().strip();
    }

    /**
     * Consecutive batches of one agent process are at most two poll intervals apart (by their send time), or two
     * of its {@code --ship-every}.
     */
    void assertBatchesEveryTwoIntervals(Node node) {
        List<RecordingProxy.Batch> mine = new ArrayList<>();
        for (RecordingProxy.Batch b : proxy.batches()) {
            if (b.host().equals(node.name) && b.status() == 200) {
                mine.add(b);
            }
        }
        Map<Long, RecordingProxy.Batch> bySeq = new TreeMap<>();
        for (RecordingProxy.Batch b : mine) {
            bySeq.putIfAbsent(b.seq(), b);
        }
        assertThat(bySeq).as(node.name + " batches").isNotEmpty();
        double limit = 2 * (node.shipEvery != null ? node.shipEvery : INTERVAL).toMillis() / 1000.0;
        // A fresh JVM's first poll (class loading, the first full /proc scan, no JIT yet) may take longer on a loaded
        // machine; it is still bounded, so an agent that hangs at start fails.
        double firstLimit = 10 * INTERVAL.toMillis() / 1000.0;
        RecordingProxy.Batch previous = null;
        List<String> gaps = new ArrayList<>();
        for (RecordingProxy.Batch b : bySeq.values()) {
            if (previous != null && b.seq() == previous.seq() + 1 && b.agentId().equals(previous.agentId())) {
                double gap = b.sentAt() - previous.sentAt();
                if (gap > (startedAt(previous.seq()) ? firstLimit : limit)) {
                    gaps.add(String.format(Locale.ROOT, "seq %d -> %d: %.2f s", previous.seq(), b.seq(), gap));
                }
            }
            previous = b;
        }
        assertThat(gaps).as(node.name + ": GPU batches more than two poll intervals apart").isEmpty();
    }

    /**
     * True for the first batch of an agent process: a started agent continues its sequence after the block its
     * previous process leased (AgentIdentity leases 1,000 at a time), so its first number is a block's first.
     */
    static boolean startedAt(long seq) {
        return seq % 1000 == 0;
    }

    /** In phase B the agents ran throughout: every seq of each agent id from then on was taken by a collector. */
    void assertNoBatchLostSince(long fromBatch) {
        Map<String, List<Long>> seqs = new LinkedHashMap<>();
        List<RecordingProxy.Batch> all = proxy.batches();
        for (RecordingProxy.Batch b : all.subList((int) Math.min(fromBatch, all.size()), all.size())) {
            if (b.status() == 200) {
                seqs.computeIfAbsent(b.agentId(), k -> new ArrayList<>()).add(b.seq());
            }
        }
        for (Map.Entry<String, List<Long>> e : seqs.entrySet()) {
            List<Long> sorted = e.getValue().stream().distinct().sorted().toList();
            long first = sorted.get(0);
            long last = sorted.get(sorted.size() - 1);
            List<Long> missing = new ArrayList<>();
            for (long s = first; s <= last; s++) {
                if (Collections.binarySearch(sorted, s) < 0) {
                    missing.add(s);
                }
            }
            assertThat(missing).as("batches of " + e.getKey() + " never taken by a collector").isEmpty();
        }
    }

    /** Entries no agent wrote, named like the first three of the spool: delivery must go around them. */
    static void seedBadSpoolEntries(Path spool) throws IOException {
        Files.createDirectories(spool);
        Files.createDirectory(spool.resolve("00000000000000000001-POST-%2Fv1%2Fsamples.json.gz"));
        Files.writeString(spool.resolve("00000000000000000002-POST-%2Fv1%2Fsamples.json.gz"), "not gzip at all");
        try (RandomAccessFile big = new RandomAccessFile(
                spool.resolve("00000000000000000003-POST-%2Fv1%2Fsamples.json.gz").toFile(), "rw")) {
            big.setLength(200L << 20);
        }
    }
}
