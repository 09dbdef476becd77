package dev.trainwatch.integration;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The command line of a {@code trainwatch collector} process started from the shaded jar by a test (OperationsIT
 * starts 21 of them, CollectorRestartIT 3). The JVM settings cut what each start costs, and nothing the collector
 * does: the C1 compiler alone and the serial collector (as the launcher's collector settings), and a class-data
 * sharing archive of the classes a started collector loads, made once per test JVM by a collector started with
 * {@code -XX:ArchiveClassesAtExit}, asked for {@code /healthz}, {@code /metrics} and {@code /v1/runs}, and stopped
 * with SIGTERM. A collector's start to {@code /healthz} took 2.0 s of CPU without the archive and 1.2 s with it
 * (docs/PERFORMANCE.md, "The test suite itself"). The archive is made in the background from the first call on:
 * the collectors started before it is ready (and all of them when it cannot be made) start without it.
 */
final class CollectorJvm {
    private CollectorJvm() {}

    private static final List<String> FLAGS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "-XX:-UsePerfData");
    private static volatile Path archive;
    private static boolean started;

    /** {@code java <flags> -jar <jar> collector <args>}, with the archive once it exists. */
    static List<String> command(Path jar, List<String> jvmOptions, String... collectorArgs) {
        List<String> command = new ArrayList<>();
        command.add(javaBin());
        command.addAll(jvmOptions);
        command.addAll(FLAGS);
        Path jsa = archiveWhenReady(jar);
        if (jsa != null) {
            // -Xshare:auto: a collector whose archive does not fit this JVM starts without it.
            command.addAll(List.of("-XX:SharedArchiveFile=" + jsa, "-Xshare:auto"));
        }
        command.addAll(List.of("-jar", jar.toString(), "collector"));
        command.addAll(List.of(collectorArgs));
        return command;
    }

    static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * The archive for this jar once it is made, else null; the first call starts making it (a collector start
     * waits for no archive: on a loaded machine making it took 10 s).
     */
    static synchronized Path archiveWhenReady(Path jar) {
        if (!started) {
            started = true;
            Thread maker = new Thread(() -> make(jar), "collector-cds-archive");
            maker.setDaemon(true);
            maker.start();
        }
        return archive;
    }

    private static void make(Path jar) {
        Process process = null;
        Path data = null;
        try {
            Path dir = Files.createDirectories(ProjectFiles.root().resolve("integration/target/collector-cds"));
            Path jsa = dir.resolve("collector.jsa");
            Path tmp = dir.resolve("collector.jsa.tmp");
            Files.deleteIfExists(tmp);
            data = Files.createTempDirectory(dir, "data");
            int port = PeerProcess.freePort();
            List<String> command = new ArrayList<>(List.of(javaBin()));
            command.addAll(FLAGS);
            command.addAll(List.of("-XX:ArchiveClassesAtExit=" + tmp, "-jar", jar.toString(), "collector",
                    "--listen", "127.0.0.1:" + port, "--data-dir", data.toString()));
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("archive.log").toFile()).start();
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            Process started = process;
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .failFast(() -> !started.isAlive())
                    .until(() -> get(http, port, "/healthz") == 200);
            for (String path : List.of("/metrics", "/v1/runs", "/v1/history")) {
                get(http, port, path);
            }
            process.destroy();
            if (process.waitFor(60, TimeUnit.SECONDS) && Files.size(tmp) > 0) {
                Files.move(tmp, jsa, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                archive = jsa;
            }
        } catch (Exception | AssertionError e) {
            System.out.println("CollectorJvm: no class-data sharing archive (" + e + "); collectors start without one");
        } finally {
            if (process != null) {
                process.destroyForcibly();
            }
            if (data != null) {
                try (var files = Files.walk(data)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                } catch (IOException ignored) {
                    // A leftover directory in target/ is harmless.
                }
            }
        }
    }

    private static int get(HttpClient http, int port, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}
