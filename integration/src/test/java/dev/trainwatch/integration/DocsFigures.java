package dev.trainwatch.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.trainwatch.cli.demo.DemoStack;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Regenerates the figures and examples the docs show from what the product does now: the answer to API.md's
 * {@code PUT /v1/runs} example (between its {@code <!-- generated: put-run -->} markers) and the README's picture of
 * the page on the demo ({@code docs/images/page.png}, headless Chromium). {@code docs/regenerate} runs it;
 * {@code DocsExamplesTest} fails when API.md's example is not what this would write.
 */
public final class DocsFigures {
    /** The spec of API.md's PUT example (its curl line sends the same). */
    static final Map<String, Object> PUT_SPEC = Map.of("model", "pixart-sigma-xl-2", "gpu", "a100-80gb", "gpus", 8,
            "batch", 12, "resolution", 1024, "precision", "bf16", "optimizer", "came", "features", "online",
            "total_steps", 20_000);
    static final String BEGIN = "<!-- generated: put-run (docs/regenerate) -->";
    static final String END = "<!-- end generated: put-run -->";
    static final int WIDTH = 1400;
    static final int HEIGHT = 1000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private DocsFigures() {
    }

    public static void main(String[] args) throws Exception {
        Path root = ProjectFiles.root();
        Path api = root.resolve("docs/API.md");
        Files.writeString(api, withPutExample(Files.readString(api), putRunExample()));
        System.out.println("wrote the PUT /v1/runs example in " + api);
        Path picture = root.resolve("docs/images/page.png");
        screenshotDemo(picture);
        System.out.println("wrote " + picture);
    }

    /** API.md with the block between the markers replaced by {@code example}. */
    static String withPutExample(String apiMd, String example) {
        int begin = apiMd.indexOf(BEGIN);
        int end = apiMd.indexOf(END);
        if (begin < 0 || end < begin) {
            throw new IllegalStateException("docs/API.md has no " + BEGIN + " … " + END + " block");
        }
        return apiMd.substring(0, begin + BEGIN.length()) + "\n```json\n" + example + "\n```\n" + apiMd.substring(end);
    }

    /** The block API.md holds now, or null. */
    static String currentPutExample(String apiMd) {
        int begin = apiMd.indexOf(BEGIN);
        int end = apiMd.indexOf(END);
        if (begin < 0 || end < begin) {
            return null;
        }
        String block = apiMd.substring(begin + BEGIN.length(), end).strip();
        return block.replaceFirst("^```json\n", "").replaceFirst("\n```$", "");
    }

    /** What a collector answers the PUT example with, abridged to the fields the docs discuss. */
    static String putRunExample() throws Exception {
        try (CollectorServer collector = CollectorServer.start(CollectorConfig.defaults().withListen("127.0.0.1", 0),
                List.of())) {
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            collector.uri().resolve("/v1/runs/pixart-sigma-1024"))
                    .header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(PUT_SPEC))).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("PUT answered " + response.statusCode() + ": " + response.body());
            }
            JsonNode run = JSON.readTree(response.body());
            JsonNode estimate = run.path("estimate");
            ObjectNode e = JSON.createObjectNode();
            for (String field : List.of("model", "gpu", "params", "peak_memory_bytes", "gpu_memory_bytes", "fits",
                    "max_batch", "step_seconds", "samples_per_second")) {
                e.set(field, estimate.path(field));
            }
            ObjectNode breakdown = e.putObject("breakdown");
            breakdown.set("weights", estimate.path("breakdown").path("weights"));
            breakdown.set("activations", estimate.path("breakdown").path("activations"));
            breakdown.put("...", 0);
            ObjectNode suggestion = e.putArray("suggestions").addObject();
            JsonNode first = estimate.path("suggestions").path(0);
            suggestion.set("change", first.path("change"));
            suggestion.set("saves_bytes", first.path("saves_bytes"));
            suggestion.put("...", "...");
            return "{\"run_id\":\"pixart-sigma-1024\",\n"
                    + " \"spec\":{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"gpus\":8,\"batch\":12,"
                    + "\"resolution\":1024,\"...\":\"...\"},\n"
                    + " \"estimate\":" + JSON.writeValueAsString(e) + ",\n"
                    + " \"observed\":{\"gpu_count\":0,\"...\":\"...\"},\"comparison\":{\"...\":\"...\"},"
                    + "\"anomalies\":[],\"gpus\":[],\"hosts\":[],\"ended\":false,\"...\":\"...\"}";
        }
    }

    /** The demo's page once its scenarios' anomalies are up, as README shows it. */
    static void screenshotDemo(Path file) throws Exception {
        String chromium = null;
        for (String candidate : List.of("/usr/bin/chromium", "/usr/bin/chromium-browser")) {
            if (Files.isExecutable(Path.of(candidate))) {
                chromium = candidate;
            }
        }
        if (chromium == null) {
            throw new IllegalStateException("chromium is not installed; run .ci/install-deps");
        }
        DemoStack demo = DemoStack.start(CollectorConfig.defaults().withListen("127.0.0.1", 0), false, 10,
                new PrintWriter(new StringWriter()));
        try {
            URI runs = demo.pageUri().resolve("v1/runs");
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (System.nanoTime() < deadline) {
                String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(runs).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                if (body.contains("\"data_starvation\"") && body.contains("\"oom_risk\"") && body.contains("\"throttling\"")) {
                    break;
                }
                Thread.sleep(1000);
            }
            Path profile = Files.createTempDirectory("trainwatch-docs-chromium");
            Files.createDirectories(file.toAbsolutePath().getParent());
            List<String> command = new ArrayList<>(List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update",
                    "--no-first-run", "--disable-sync", "--hide-scrollbars", "--user-data-dir=" + profile,
                    "--virtual-time-budget=10000", "--screenshot=" + file.toAbsolutePath(),
                    "--window-size=" + WIDTH + "," + HEIGHT, demo.pageUri().toString()));
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException("chromium could not take the screenshot");
            }
        } finally {
            demo.close();
        }
    }

    static String utf8(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
