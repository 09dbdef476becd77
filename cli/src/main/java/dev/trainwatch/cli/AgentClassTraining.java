package dev.trainwatch.cli;

import dev.trainwatch.agent.Agent;
import dev.trainwatch.agent.AgentConfig;
import dev.trainwatch.agent.GpuReaders;
import dev.trainwatch.agent.attribution.LinuxProcSource;
import dev.trainwatch.agent.gpu.GpuReader;
import dev.trainwatch.agent.gpu.GpuUnavailableException;
import dev.trainwatch.protocol.GpuSample;
import dev.trainwatch.protocol.MonotonicClock;
import dev.trainwatch.protocol.UtilizationWindow;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * {@code trainwatch agent --cds-training}: run once by the launcher under {@code -XX:ArchiveClassesAtExit}, a few
 * polls of a real agent (or one made-up GPU) shipped to a throwaway loopback sink, so the class-data archive holds
 * what a running agent loads. Leaves nothing behind; never reaches a collector.
 */
final class AgentClassTraining {

    private static final int POLLS = 3;

    private AgentClassTraining() {
    }

    static int run(Path nvmlLibrary) throws IOException, InterruptedException {
        // Everything loaded here goes into the archive: so no HTTP server, file-tree stream or Files.createTempDirectory
        // (SecureRandom), which the agent itself never loads.
        Path spool = Path.of(System.getProperty("java.io.tmpdir"),
                "trainwatch-cds-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        Files.createDirectory(spool);
        Clock clock = MonotonicClock.system();
        GpuReader gpus;
        try {
            gpus = GpuReaders.openNvml(nvmlLibrary, System.getenv(), clock);
        } catch (GpuUnavailableException | RuntimeException e) {
            gpus = new OneGpu(clock);
        }
        try (Sink sink = new Sink()) {
            AgentConfig config = new AgentConfig(URI.create("http://127.0.0.1:" + sink.port()),
                    "cds-training", null, null, null, Duration.ofSeconds(1), null, spool, 1L << 20,
                    Duration.ofSeconds(5));
            try (Agent agent = Agent.create(config, gpus, null, LinuxProcSource.system(), clock)) {
                // Polls at 0, 1 and 2 s, each shipped by the delivery thread; close() delivers what is left.
                agent.start();
                Thread.sleep((POLLS - 1) * 1000L + 500);
            }
        } finally {
            TempDirs.deleteQuietly(spool);
        }
        return ExitCodes.OK;
    }

    /** A throwaway loopback collector: HTTP/1.1 keep-alive, reads each body, answers 200 {@code {}}. */
    private static final class Sink implements AutoCloseable {
        private static final byte[] ANSWER = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}").getBytes(StandardCharsets.US_ASCII);

        private final ServerSocket server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());

        Sink() throws IOException {
            Thread thread = new Thread(this::serve, "trainwatch-cds-sink");
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return server.getLocalPort();
        }

        private void serve() {
            while (!server.isClosed()) {
                try (Socket socket = server.accept()) {
                    InputStream in = new BufferedInputStream(socket.getInputStream());
                    OutputStream out = socket.getOutputStream();
                    long length;
                    while ((length = readHead(in)) >= 0) {
                        in.skipNBytes(length);
                        out.write(ANSWER);
                        out.flush();
                    }
                } catch (IOException e) {
                    // closed, or the agent hung up: next connection
                }
            }
        }

        /** Reads a request's head; its body length, or -1 at the end of the connection. */
        private static long readHead(InputStream in) throws IOException {
            long length = 0;
            StringBuilder line = new StringBuilder();
            boolean any = false;
            for (int b; (b = in.read()) >= 0; ) {
                any = true;
                if (b != '\n') {
                    if (b != '\r') {
                        line.append((char) b);
                    }
                    continue;
                }
                if (line.length() == 0) {
                    return length;
                }
                String header = line.toString();
                if (header.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                    length = Long.parseLong(header.substring(15).strip());
                }
                line.setLength(0);
            }
            if (any) {
                throw new EOFException("request cut short");
            }
            return -1;
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
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
                    new UtilizationWindow(6, 0.4, 0.5, 0.6, 0.0, ts - 1, ts),
                    1_410_000_000L, 1_410_000_000L, 1_593_000_000L, 1_593_000_000L, List.of(), 300.0, 400.0, 1.0e6,
                    60.0, 0, List.of(), false, null));
        }

        @Override
        public String driverVersion() {
            return null;
        }
    }
}
