package dev.trainwatch.integration;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A real Alertmanager and a real Prometheus on loopback: Prometheus scrapes one target every second, evaluates
 * the project's rules (a test copy whose `for:` durations are shortened, see {@link #shortenedRules}) every
 * second and sends alerts to the Alertmanager. Stops both on {@link #close()}.
 */
final class LoopbackStack implements AutoCloseable {
    /** Rules whose `for:` stays as written: shortening it would make them fire before Prometheus' first scrape. */
    static final Set<String> KEEP_FOR = Set.of("TrainwatchCollectorAbsent");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration STARTUP = Duration.ofSeconds(30);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<PeerProcess> peers = new ArrayList<>();
    private final URI prometheus;
    private final URI alertmanager;

    private LoopbackStack(URI prometheus, URI alertmanager) {
        this.prometheus = prometheus;
        this.alertmanager = alertmanager;
    }

    /** Starts Alertmanager, then Prometheus scraping {@code target} (host:port) as job "trainwatch". */
    static LoopbackStack start(Path dir, String target) throws IOException {
        return start(dir, List.of(target));
    }

    /**
     * Starts Alertmanager, then Prometheus scraping every one of {@code targets} (host:port) as job "trainwatch". A
     * port found free can be taken by another process before the peer binds it (the tests beside this one open
     * connections all the time): then the stack is started again on other ports, at most three times.
     */
    static LoopbackStack start(Path dir, List<String> targets) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return startOnce(dir, targets);
            } catch (IllegalStateException e) {
                if (!String.valueOf(e.getMessage()).contains("address already in use") || attempt == 3) {
                    throw e;
                }
            }
        }
    }

    private static LoopbackStack startOnce(Path dir, List<String> targets) throws IOException {
        Path prometheusBin = ExternalCommand.require("prometheus", "prometheus");
        Path alertmanagerBin = ExternalCommand.require("prometheus-alertmanager", "prometheus-alertmanager");
        int amPort = PeerProcess.freePort();
        int promPort = PeerProcess.freePort();
        LoopbackStack stack = new LoopbackStack(URI.create("http://127.0.0.1:" + promPort),
                URI.create("http://127.0.0.1:" + amPort));
        try {
            Path amConfig = dir.resolve("alertmanager.yml");
            // A receiver without integrations: the test reads what arrived from Alertmanager's own API.
            Files.writeString(amConfig, """
                    route:
                      receiver: test
                      group_by: [alertname]
                      group_wait: 1s
                      group_interval: 1s
                    receivers:
                      - name: test
                    """);
            stack.peers.add(PeerProcess.start("alertmanager", dir, List.of(alertmanagerBin.toString(),
                    "--config.file=" + amConfig, "--storage.path=" + Files.createDirectories(dir.resolve("am-data")),
                    "--web.listen-address=127.0.0.1:" + amPort, "--cluster.listen-address=")));

            Path rules = Files.createDirectories(dir.resolve("rules"));
            shortenedRules(rules);
            Path promConfig = dir.resolve("prometheus.yml");
            Files.writeString(promConfig, """
                    global:
                      scrape_interval: 1s
                      evaluation_interval: 1s
                    rule_files:
                      - %s/*.rules.yml
                    alerting:
                      alertmanagers:
                        - static_configs:
                            - targets: ["127.0.0.1:%d"]
                    scrape_configs:
                      - job_name: trainwatch
                        static_configs:
                          - targets: [%s]
                    """.formatted(rules, amPort, targets.stream().map(t -> "\"" + t + "\"")
                            .collect(java.util.stream.Collectors.joining(", "))));
            stack.peers.add(PeerProcess.start("prometheus", dir, List.of(prometheusBin.toString(),
                    "--config.file=" + promConfig, "--storage.tsdb.path=" + Files.createDirectories(dir.resolve("tsdb")),
                    "--web.listen-address=127.0.0.1:" + promPort, "--rules.alert.resend-delay=1s")));

            // Not answering yet is waited for; a peer that exited fails at once (with its log).
            await("Alertmanager and Prometheus ready").atMost(STARTUP).pollInterval(Duration.ofMillis(200))
                    .ignoreExceptionsInstanceOf(IOException.class).until(() -> {
                        stack.peers.forEach(p -> {
                            if (!p.alive()) {
                                throw new IllegalStateException("exited:\n" + p.logTail());
                            }
                        });
                        return stack.status(stack.alertmanager.resolve("/-/ready")) == 200
                                && stack.status(stack.prometheus.resolve("/-/ready")) == 200;
                    });
            return stack;
        } catch (RuntimeException | IOException e) {
            stack.close();
            throw e;
        }
    }

    /**
     * Copies {@code alerts/*.rules.yml} into {@code dir} with every alert's `for:` cut to 1 s (except
     * {@link #KEEP_FOR}), so a test sees in seconds what production sees in minutes. Expressions, labels and
     * annotations are untouched; the promtool unit tests cover the real durations.
     */
    static void shortenedRules(Path dir) throws IOException {
        for (Path file : ProjectFiles.ruleFiles()) {
            JsonNode doc = RuleFiles.readYaml(file);
            for (JsonNode group : doc.path("groups")) {
                for (JsonNode rule : group.path("rules")) {
                    if (rule.has("for") && !KEEP_FOR.contains(rule.path("alert").asText())) {
                        ((ObjectNode) rule).put("for", "1s");
                    }
                }
            }
            RuleFiles.YAML.writeValue(dir.resolve(file.getFileName()).toFile(), doc);
        }
    }

    /** Prometheus' base address. */
    URI prometheusUri() {
        return prometheus;
    }

    /** Instant query; the {@code data.result} array. */
    ArrayNode query(String expr) {
        JsonNode answer = get(prometheus.resolve("/api/v1/query?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8)));
        if (!"success".equals(answer.path("status").asText())) {
            throw new IllegalStateException("query failed: " + expr + " -> " + answer);
        }
        return (ArrayNode) answer.path("data").path("result");
    }

    /** Prometheus' active alerts (pending and firing): each has labels, state, annotations. */
    ArrayNode prometheusAlerts() {
        return (ArrayNode) get(prometheus.resolve("/api/v1/alerts")).path("data").path("alerts");
    }

    /** The alerts Alertmanager holds (API v2). */
    ArrayNode alertmanagerAlerts() {
        return (ArrayNode) get(alertmanager.resolve("/api/v2/alerts"));
    }

    String logs() {
        StringBuilder out = new StringBuilder();
        peers.forEach(p -> out.append(p.logTail()).append('\n'));
        return out.toString();
    }

    private JsonNode get(URI uri) {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException("GET " + uri, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: GET " + uri, e);
        }
    }

    private int status(URI uri) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Override
    public void close() {
        // Prometheus first, so it does not log errors about a vanished Alertmanager.
        for (int i = peers.size() - 1; i >= 0; i--) {
            peers.get(i).close();
        }
    }
}
