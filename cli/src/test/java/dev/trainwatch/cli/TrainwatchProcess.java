package dev.trainwatch.cli;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code trainwatch} as a user runs it: a separate JVM running the command's {@code main}, with its own
 * environment, stdout, stderr and exit status. Its output goes to files, read while it runs.
 */
final class TrainwatchProcess implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern URL = Pattern.compile("(http://127\\.0\\.0\\.1:\\d+/)");

    private final Process process;
    private final Path stdout;
    private final Path stderr;
    private final HttpClient http = HttpClient.newHttpClient();

    private TrainwatchProcess(Process process, Path stdout, Path stderr) {
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    static TrainwatchProcess start(Path dir, Map<String, String> environment, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "-Xss512k", "-XX:TieredStopAtLevel=1",
                // The serial collector, as the launcher gives every command (a 12 s `trainwatch run` under C1: 2.9 s
                // of CPU with the JVM's default G1, 2.5 s with it).
                "-XX:+UseSerialGC", "-XX:-UsePerfData",
                TrainwatchCommand.class.getName()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "stdout", ".txt");
        Path err = Files.createTempFile(dir, "stderr", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().putAll(environment);
        return new TrainwatchProcess(builder.start(), out, err);
    }

    String stdout() throws IOException {
        return Files.readString(stdout, StandardCharsets.UTF_8);
    }

    String stderr() throws IOException {
        return Files.readString(stderr, StandardCharsets.UTF_8);
    }

    long pid() {
        return process.pid();
    }

    /** Waits for exit; fails the test after {@code timeout}. */
    int waitFor(Duration timeout) throws Exception {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("trainwatch did not exit within " + timeout + "; stderr: " + stderr());
        }
        return process.exitValue();
    }

    /** Sends SIGTERM, as a job scheduler or {@code kill} would. */
    void terminate() {
        process.destroy();
    }

    /** The first page URL the command printed (on stdout or stderr). */
    URI pageUri() {
        String[] found = new String[1];
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            if (!process.isAlive()) {
                throw new AssertionError("trainwatch exited early with " + process.exitValue() + ": " + stderr());
            }
            Matcher m = URL.matcher(stdout() + "\n" + stderr());
            if (m.find()) {
                found[0] = m.group(1);
                return true;
            }
            return false;
        });
        return URI.create(found[0]);
    }

    JsonNode getJson(URI uri) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError(uri + " answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body());
    }

    /** The runs the collector shows, as its API sends them. */
    JsonNode runs(URI page) throws IOException, InterruptedException {
        JsonNode body = getJson(page.resolve("v1/runs"));
        return body.isArray() ? body : body.path("runs");
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }
}
