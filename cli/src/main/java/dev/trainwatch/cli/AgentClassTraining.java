package dev.trainwatch.cli;

import com.sun.net.httpserver.HttpServer;
import dev.trainwatch.agent.Agent;
import dev.trainwatch.agent.AgentConfig;
import dev.trainwatch.agent.GpuReaders;
import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.protocol.AgentEvent;
import dev.trainwatch.protocol.GpuSample;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@code trainwatch agent --cds-training}: what the launcher runs once, under {@code -XX:ArchiveClassesAtExit}, to
 * make the agent's class-data sharing archive: a few polls of a real agent (NVML when the node has it, else one
 * made-up GPU), each shipped as gzip JSON over HTTP to a throwaway sink on loopback, so the archive holds the classes a
 * running agent loads. Leaves nothing behind (its spool is a temporary directory). Never reaches a collector.
 */
final class AgentClassTraining {

    private static final int POLLS = 3;

    private AgentClassTraining() {
    }

    static int run(Path nvmlLibrary) throws IOException, InterruptedException {
        HttpServer sink = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        sink.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] answer = "{}".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        sink.start();
        Path spool = Files.createTempDirectory("trainwatch-cds-");
        Clock clock = Clock.systemUTC();
        GpuReader gpus;
        try {
            gpus = GpuReaders.openNvml(nvmlLibrary, System.getenv(), clock);
        } catch (GpuUnavailableException | RuntimeException e) {
            gpus = new OneGpu(clock);
        }
        try {
            AgentConfig config = new AgentConfig(URI.create("http://127.0.0.1:" + sink.getAddress().getPort()),
                    "cds-training", null, null, null, Duration.ofSeconds(1), null, spool, 1L << 20,
                    Duration.ofSeconds(5));
            try (Agent agent = Agent.create(config, gpus, null, LinuxProcSource.system(), clock)) {
                // Polls at 0, 1 and 2 s, each shipped by the delivery thread; close() delivers what is left.
                agent.start();
                Thread.sleep((POLLS - 1) * 1000L + 500);
            }
        } finally {
            sink.stop(0);
            try (Stream<Path> files = Files.walk(spool)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return ExitCodes.OK;
    }

    /** One made-up GPU with every reading, for a node without NVML. */
    private static final class OneGpu implements GpuReader {
        private final Clock clock;

        OneGpu(Clock clock) {
            this.clock = clock;
        }

        @Override
        public List<GpuSample> readAll() {
            double ts = clock.millis() / 1000.0;
            return List.of(new GpuSample(ts, 0, "GPU-00000000-0000-4000-8000-000000000000", "training", null,
                    85_899_345_920L, 1L << 30, null, 84_825_604_096L, 0.5, 0.2,
                    new dev.trainwatch.protocol.UtilizationWindow(6, 0.4, 0.5, 0.6, 0.0, ts - 1, ts),
                    1_410_000_000L, 1_410_000_000L, 1_593_000_000L, 1_593_000_000L, List.of(), 300.0, 400.0, 1.0e6,
                    60.0, 0, List.of(), false));
        }

        @Override
        public List<AgentEvent> drainEvents() {
            return List.of();
        }

        @Override
        public long failedReads() {
            return 0;
        }

        @Override
        public String driverVersion() {
            return null;
        }

        @Override
        public void close() {
        }
    }
}
