package dev.trainwatch.integration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A long-running peer (Prometheus, Alertmanager) started for a test: output to a log file the failure message can
 * quote, stopped (TERM, then KILL) on {@link #close()}.
 */
final class PeerProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    private PeerProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    static PeerProcess start(String name, Path logDir, List<String> command) {
        Path log = logDir.resolve(name + ".log");
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            return new PeerProcess(name, process, log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + " " + command, e);
        }
    }

    boolean alive() {
        return process.isAlive();
    }

    /** The last lines of the peer's output, for failure messages. */
    String logTail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return name + " log (last 30 lines):\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return name + " log unreadable: " + e.getMessage();
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A TCP port free on loopback right now (the peers take a port number, not port 0). Taken below the kernel's
     * ephemeral range when there is room: a port handed out by {@code bind(0)} comes from that range, as do the local
     * ports of every outgoing connection, so with the other tests running beside this one such a port is often taken
     * again before the peer binds it ("address already in use").
     */
    static int freePort() {
        int low = ephemeralLow();
        if (low > 11_000) {
            java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
            for (int attempt = 0; attempt < 50; attempt++) {
                int port = random.nextInt(10_000, low);
                try (ServerSocket socket = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
                    return socket.getLocalPort();
                } catch (IOException taken) {
                    // another one
                }
            }
        }
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port", e);
        }
    }

    /** The first port of the kernel's ephemeral range (32768 when it cannot be read). */
    private static int ephemeralLow() {
        try {
            String range = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
            return Integer.parseInt(range.trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
