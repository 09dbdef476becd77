package dev.trainwatch.cli.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.protocol.AgentBatch;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.StepEvent;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code trainwatch agent} as a real process against the inputs that used to stop it (issue 19): a FIFO at the
 * {@code --log} path, a spool seeded with entries no agent wrote, a spool directory that cannot be written, SIGTERM.
 */
class AgentInputsProcessIT {

    @TempDir
    Path dir;

    final List<AgentBatch> batches = Collections.synchronizedList(new ArrayList<>());
    final List<StepEvent> steps = Collections.synchronizedList(new ArrayList<>());
    final List<Process> processes = new ArrayList<>();
    HttpServer server;

    @AfterEach
    void tearDown() {
        processes.forEach(Process::destroyForcibly);
        if (server != null) {
            server.stop(0);
        }
    }

    Process agent(String... extra) throws IOException {
        AgentProcessIT helper = new AgentProcessIT();
        helper.dir = dir;
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), "dev.trainwatch.cli.TrainwatchCommand",
                "agent", "--collector", "http://127.0.0.1:" + server.getAddress().getPort(), "--interval", "200ms",
                "--nvml-library", AgentProcessIT.fakeNvml().toString(), "--host", "test-node"));
        command.addAll(List.of(extra));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("stderr.txt").toFile()));
        builder.environment().putAll(Map.of("FAKE_NVML_SCENARIO", helper.scenario().toString()));
        Process process = builder.start();
        processes.add(process);
        return process;
    }

    String stderr() throws IOException {
        Path file = dir.resolve("stderr.txt");
        return Files.exists(file) ? Files.readString(file) : "";
    }

    void startCollector() throws IOException {
        startCollector(0);
    }

    void startCollector(int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        server.createContext("/v1/", exchange -> {
            try (exchange; InputStream in = new GZIPInputStream(exchange.getRequestBody())) {
                byte[] body = in.readAllBytes();
                String path = exchange.getRequestURI().getPath();
                if (path.equals("/v1/samples")) {
                    batches.add(Json.MAPPER.readValue(body, AgentBatch.class));
                } else if (path.endsWith("/steps")) {
                    steps.addAll(List.of(Json.MAPPER.readValue(body, StepEvent[].class)));
                }
                exchange.sendResponseHeaders(200, -1);
            }
        });
        server.start();
    }

    @Test
    void aFifoAtTheLogPathStopsNeitherTheGpuBatchesNorSigterm() throws Exception {
        startCollector();
        Path log = dir.resolve("train.log");
        Process mk = new ProcessBuilder("mkfifo", log.toString()).start();
        assertThat(mk.waitFor(10, TimeUnit.SECONDS)).isTrue();
        Process agent = agent("--log", log.toString(), "--log-format", "dit", "--run-id", "fifo-run",
                "--spool-dir", dir.resolve("spool").toString());
        // Before: the poll thread blocked in open() and no batch ever came.
        await().atMost(60, TimeUnit.SECONDS).until(() -> batches.size() >= 10);
        await().atMost(30, TimeUnit.SECONDS).until(() -> stderr().contains("is a FIFO, not a regular file"));
        assertThat(stderr().lines().filter(l -> l.contains("is a FIFO"))).as(stderr()).hasSize(1);
        // A regular file takes the FIFO's place: its steps are read.
        Path regular = dir.resolve("train.log.new");
        Files.writeString(regular, "[2024-03-01 10:00:00] (step=0000100) Train Loss: 0.15, Train Steps/Sec: 0.50\n"
                + "[2024-03-01 10:00:02] (step=0000101) Train Loss: 0.15, Train Steps/Sec: 0.50\n");
        Files.move(regular, log, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        await().atMost(30, TimeUnit.SECONDS).until(() -> steps.size() >= 2);
        assertThat(steps).extracting(StepEvent::step).containsExactly(100L, 101L);
        agent.destroy(); // SIGTERM
        assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.exitValue()).as(stderr()).isZero();
    }

    @Test
    void aSpoolSeededWithBadEntriesIsReplayedAroundThem() throws Exception {
        startCollector();
        Path spool = dir.resolve("spool");
        Files.createDirectories(spool);
        Files.createDirectory(spool.resolve("00000000000000000001-POST-%2Fv1%2Fsamples.json.gz"));
        Files.writeString(spool.resolve("00000000000000000002-POST-%2Fv1%2Fsamples.json.gz"), "not gzip");
        try (RandomAccessFile big = new RandomAccessFile(
                spool.resolve("00000000000000000003-POST-%2Fv1%2Fsamples.json.gz").toFile(), "rw")) {
            big.setLength(200L << 20);
        }
        Process agent = agent("--spool-dir", spool.toString());
        // Before: "spool unreadable, giving up on it", and nothing reached the collector again.
        await().atMost(60, TimeUnit.SECONDS).until(() -> batches.size() >= 5);
        assertThat(Files.list(spool.resolve("rejected")).count()).isEqualTo(3);
        assertThat(batches.get(batches.size() - 1).health().rejectedSpoolEntries()).isEqualTo(3);
        agent.destroy();
        assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.exitValue()).as(stderr()).isZero();
    }

    static int run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }

    /**
     * A spool on a real file system that is full, or mounted read-only (a 1 MiB tmpfs: needs root and the right to
     * mount, as CI has; skipped elsewhere): the agent monitors on, each part saying so once.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"full", "read-only"})
    void aSpoolOnAFullOrReadOnlyFileSystemIsOneLineEachAndTheAgentRuns(String how) throws Exception {
        startCollector();
        Path mount = Files.createDirectories(dir.resolve("mnt"));
        boolean mounted = run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString()) == 0;
        org.junit.jupiter.api.Assumptions.assumeTrue(mounted, "cannot mount a tmpfs here");
        try {
            Path spool = Files.createDirectories(mount.resolve("spool"));
            Path log = dir.resolve("train.log");
            Files.writeString(log, "[2024-03-01 10:00:00] (step=0000100) Train Loss: 0.15, Train Steps/Sec: 0.50\n");
            if (how.equals("full")) {
                try (java.io.OutputStream out = Files.newOutputStream(mount.resolve("filler"))) {
                    byte[] block = new byte[4096];
                    while (true) {
                        out.write(block);
                    }
                } catch (IOException full) {
                    // No space left on device.
                }
            } else {
                assertThat(run("mount", "-o", "remount,ro", mount.toString())).isZero();
            }
            Process agent = agent("--spool-dir", spool.toString(), "--log", log.toString(), "--log-format", "dit",
                    "--run-id", "full-run");
            // Before: exit 1 at start, without naming the path.
            await().atMost(60, TimeUnit.SECONDS).until(() -> batches.size() >= 5);
            // The collector goes away: shipments would go to the spool, which cannot be written.
            int port = server.getAddress().getPort();
            server.stop(0);
            await().atMost(60, TimeUnit.SECONDS).until(() -> stderr().contains("cannot write the spool directory"));
            Files.writeString(log, "[2024-03-01 10:00:02] (step=0000101) Train Loss: 0.15, Train Steps/Sec: 0.50\n",
                    java.nio.file.StandardOpenOption.APPEND);
            int before = batches.size();
            startCollector(port);
            await().atMost(60, TimeUnit.SECONDS).until(() -> batches.size() >= before + 10
                    && steps.stream().anyMatch(e -> e.step() == 101));
            assertThat(agent.isAlive()).isTrue();
            String err = stderr();
            // One line per part that cannot use the directory (the identity, the spool), not one per shipment.
            assertThat(err.lines().filter(l -> l.contains("cannot write the spool directory " + spool)))
                    .as(err).hasSize(1);
            assertThat(err.lines().filter(l -> l.contains(spool.toString()))).as(err).hasSize(2);
            List<Long> seqs;
            synchronized (batches) {
                assertThat(batches.get(batches.size() - 1).health().spoolInMemory()).isTrue();
                seqs = batches.stream().map(AgentBatch::seq).distinct().sorted().toList();
            }
            // The batches made while the collector was away were kept in memory and delivered: none is missing.
            assertThat(seqs).containsExactlyElementsOf(java.util.stream.LongStream
                    .rangeClosed(seqs.get(0), seqs.get(seqs.size() - 1)).boxed().toList());
            agent.destroy();
            assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(agent.exitValue()).as(err).isZero();
        } finally {
            run("umount", "-l", mount.toString());
        }
    }

    @Test
    void aSpoolDirectoryThatCannotBeWrittenIsOneLineAndTheAgentRuns() throws Exception {
        startCollector();
        Path file = dir.resolve("file");
        Files.writeString(file, "x");
        Path spool = file.resolve("spool");
        Process agent = agent("--spool-dir", spool.toString());
        // Before: exit 1 at start, without naming the path.
        await().atMost(60, TimeUnit.SECONDS).until(() -> batches.size() >= 10);
        assertThat(agent.isAlive()).isTrue();
        assertThat(stderr().lines().filter(l -> l.contains("cannot write the spool directory " + spool)))
                .as(stderr()).hasSize(1);
        agent.destroy();
        assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.exitValue()).as(stderr()).isZero();
    }
}
