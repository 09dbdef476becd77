package dev.trainwatch.collector.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.collector.support.Payloads;
import dev.trainwatch.collector.support.RunningCollector;
import dev.trainwatch.protocol.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * Sends 10,000+ malformed or hostile requests over raw sockets (random bytes, truncated and mutated JSON, huge
 * numbers, deep nesting, wrong types, wrong methods, huge headers, bad gzip, lying Content-Length, odd paths) and
 * checks that every answer is a deliberate 4xx (never a 5xx), and that afterwards the collector still does its job:
 * a good batch is applied, /healthz answers, the scrape is well-formed. The seed is fixed so a failure reproduces.
 */
class HostileRequestsFuzzIT {

    static final int REQUESTS = Integer.getInteger("trainwatch.fuzzRequests", 10_240);
    static final long SEED = 20_261_122L;
    static final Set<Integer> DELIBERATE = Set.of(200, 400, 401, 404, 405, 413, 414, 415, 422, 431);

    /** How one hostile request went: its kind and the status (0 = connection closed without an answer). */
    record Outcome(String kind, int status, String detail) {
    }

    @Test
    void survivesTenThousandHostileRequests() throws Exception {
        try (RunningCollector collector = RunningCollector.start()) {
            int port = collector.server.port();
            byte[] batch = Payloads.json(Payloads.batch("fuzz-host", 1, collector.clock.seconds(), 8, "fuzz-run"));
            byte[] spec = "{\"model\":\"pixart-sigma-xl-2\",\"gpu\":\"a100-80gb\",\"batch\":8,\"total_steps\":100}"
                    .getBytes(StandardCharsets.UTF_8);
            byte[] steps = "[{\"step\":1,\"time_s\":1.2,\"data_time_s\":0.1},{\"step\":2,\"time_s\":1.3}]"
                    .getBytes(StandardCharsets.UTF_8);
            Generator generator = new Generator(batch, spec, steps);

            Map<String, Integer> statuses = new ConcurrentHashMap<>();
            List<Outcome> unexpected = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger sent = new AtomicInteger();
            Map<String, Long> nanos = new ConcurrentHashMap<>();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                int worker = w;
                workers.add(pool.submit(() -> {
                    Random random = new Random(SEED + worker);
                    for (int i = worker; i < REQUESTS; i += 4) {
                        Generator.Request request = generator.next(random, i);
                        long t0 = System.nanoTime();
                        Outcome outcome = send(port, request);
                        nanos.merge(request.kind(), System.nanoTime() - t0, Long::sum);
                        sent.incrementAndGet();
                        statuses.merge(outcome.kind() + " " + outcome.status(), 1, Integer::sum);
                        boolean ok = outcome.status() == 0 ? request.mayHangUp()
                                : DELIBERATE.contains(outcome.status());
                        if (!ok) {
                            unexpected.add(outcome);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get();
            }
            pool.shutdown();

            nanos.forEach((k, v) -> System.out.println("fuzz " + k + " " + v / 1_000_000 + " ms"));
            unexpected.stream().limit(20).forEach(o -> System.out.println("unexpected " + o));
            assertThat(sent.get()).isGreaterThanOrEqualTo(Math.min(REQUESTS, 10_000));
            assertThat(unexpected).as("answers other than a deliberate 4xx, by kind: " + new TreeMap<>(statuses))
                    .isEmpty();

            // Still correct afterwards.
            byte[] good = Payloads.json(Payloads.batch("after-fuzz", 1, collector.clock.seconds(), 4,
                    "after-fuzz-run"));
            HttpResponse<String> applied = collector.postJson("/v1/samples", good);
            assertThat(applied.statusCode()).isEqualTo(200);
            assertThat(Json.MAPPER.readTree(applied.body()).get("duplicate").asBoolean()).isFalse();
            assertThat(collector.get("/v1/runs/after-fuzz-run").statusCode()).isEqualTo(200);
            assertThat(collector.get("/healthz").statusCode()).isEqualTo(200);
            HttpResponse<String> scrape = collector.get("/metrics");
            assertThat(scrape.statusCode()).isEqualTo(200);
            PromtoolCheck.assertWellFormed(scrape.body());
            assertThat(scrape.body()).contains("trainwatch_gpu_run_info{gpu=\"0\"")
                    .contains("run_id=\"after-fuzz-run\"");
        }
    }

    /** Writes the raw bytes, reads until the server closes, returns the status of the first response. */
    static Outcome send(int port, Generator.Request request) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(15_000);
            OutputStream out = socket.getOutputStream();
            try {
                out.write(request.bytes());
                out.flush();
                if (request.kind().equals("garbage-request-line")) {
                    socket.shutdownOutput(); // garbage may lack the line end the server would wait for
                }
                // Otherwise no half-close: Netty treats it as the end of the connection and would drop answers still
                // being computed (a scrape runs on a worker thread); real clients do not half-close either.
            } catch (IOException e) {
                // The server may hang up before reading everything (e.g. 413 on the declared length).
            }
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            int n;
            try {
                while ((n = in.read(buffer)) > 0 && response.size() < 1 << 20) {
                    response.write(buffer, 0, n);
                }
            } catch (SocketTimeoutException e) {
                return new Outcome(request.kind(), -1, "timed out");
            } catch (IOException e) {
                // Reset after the answer: fine when an answer came.
            }
            String text = response.toString(StandardCharsets.ISO_8859_1);
            if (!text.startsWith("HTTP/1.")) {
                return new Outcome(request.kind(), 0, text.length() > 80 ? text.substring(0, 80) : text);
            }
            int status = Integer.parseInt(text.substring(9, 12));
            int bodyAt = text.indexOf("\r\n\r\n");
            String body = bodyAt < 0 ? "" : text.substring(bodyAt + 4);
            boolean head = request.kind().endsWith("-HEAD"); // answers to HEAD carry no body
            if (status >= 400 && !head && !body.startsWith("{\"error\":")) {
                return new Outcome(request.kind(), 999, "non-JSON error body: " + body);
            }
            return new Outcome(request.kind(), status, body.length() > 200 ? body.substring(0, 200) : body);
        } catch (IOException e) {
            return new Outcome(request.kind(), -2, e.toString());
        }
    }

    /** Builds hostile requests from good payloads. Thread-safe (uses the caller's Random). */
    static final class Generator {
        record Request(String kind, byte[] bytes, boolean mayHangUp) {
        }

        private static final String[] PATHS = {"/v1/samples", "/v1/runs/fuzz-run", "/v1/runs/fuzz-run/steps"};
        private static final String[] METHODS = {"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE",
            "FOO"};
        private static final String[] ODD_PATHS = {"/v1/runs/", "/v1/runs/%00", "/v1/runs/..%2F..%2Fetc",
            "/v1/runs/" + "x".repeat(300), "/v1/runs/a%20b/steps", "/v1//samples", "/metrics/../v1/samples",
            "/static/../../etc/passwd", "/static/%2e%2e/%2e%2e/pom.xml", "/v1/runs/run\u00e9", "/%ff%fe",
            "/v1/runs/id?x=1&x=2", "/healthz/extra", "/v1/samples?" + "q".repeat(2000),
            "/v1/runs/fuzz-run/series?since=%ff%fe", "/v1/runs/fuzz-run/series?max_points=%",
            "/v1/runs/fuzz-run/series?since=2026-01-01T00:00:00+99:99&max_points=1%00"};
        private static final String[] JUNK_VALUES = {"\"str\"", "[]", "{}", "null", "true", "-1", "1e999", "-1e999",
            "99999999999999999999999999", "0.0000000000000000000000001", "\"\\u0000\"", "[[[[]]]]", "1.5",
            "-0", "\"" + "z".repeat(5000) + "\"", "NaN", "Infinity"};

        private final byte[][] payloads;

        Generator(byte[]... payloads) {
            this.payloads = payloads;
        }

        Request next(Random random, int i) {
            int which = random.nextInt(payloads.length);
            byte[] good = payloads[which];
            String path = PATHS[which];
            String method = which == 1 ? "PUT" : "POST";
            return switch (i % 14) {
                case 0 -> json("random-bytes", method, path, randomBytes(random, random.nextInt(2048)));
                case 1 -> json("truncated-json", method, path,
                        java.util.Arrays.copyOf(good, random.nextInt(good.length)));
                case 2 -> json("mutated-json", method, path, mutate(random, good));
                case 3 -> json("junk-values", method, path, replaceValue(random, good));
                case 4 -> json("deep-nesting", method, path, nesting(random));
                case 5 -> {
                    String wrong = METHODS[random.nextInt(METHODS.length)];
                    yield plain("wrong-method-" + wrong, wrong, random.nextBoolean() ? path : "/metrics", null, good,
                            Map.of());
                }
                case 6 -> plain("huge-header", method, path, "application/json", good,
                        Map.of("X-Junk", "h".repeat(20_000 + random.nextInt(50_000))));
                case 7 -> plain("bad-gzip", method, path, "application/json", badGzip(random, good),
                        Map.of("Content-Encoding", "gzip"));
                case 8 -> lyingLength(random, method, path, good);
                case 9 -> plain("odd-path", METHODS[random.nextInt(4)], ODD_PATHS[random.nextInt(ODD_PATHS.length)],
                        "application/json", good, Map.of());
                case 10 -> plain("wrong-content-type", method, path,
                        new String[] {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                            "application/xml", "json", ""}[random.nextInt(6)], good, Map.of());
                case 11 -> new Request("garbage-request-line", randomBytes(random, 1 + random.nextInt(512)), true);
                case 12 -> plain("bad-token-header", method, path, "application/json", good,
                        Map.of("Authorization", "Bearer " + "t".repeat(random.nextInt(100))));
                default -> json("huge-array", method, path, hugeArray(random, which));
            };
        }

        private static Request json(String kind, String method, String path, byte[] body) {
            return plain(kind, method, path, "application/json", body, Map.of());
        }

        private static Request plain(String kind, String method, String path, String contentType, byte[] body,
                                     Map<String, String> headers) {
            StringBuilder head = new StringBuilder();
            head.append(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
            if (contentType != null && !contentType.isEmpty()) {
                head.append("Content-Type: ").append(contentType).append("\r\n");
            }
            headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
            head.append("Content-Length: ").append(body.length).append("\r\nConnection: close\r\n\r\n");
            byte[] headBytes = head.toString().getBytes(StandardCharsets.UTF_8);
            byte[] all = java.util.Arrays.copyOf(headBytes, headBytes.length + body.length);
            System.arraycopy(body, 0, all, headBytes.length, body.length);
            // Huge headers and odd paths may be refused at the HTTP codec, which can hang up after its 4xx.
            boolean mayHangUp = kind.equals("huge-header") || kind.equals("odd-path");
            return new Request(kind, all, mayHangUp);
        }

        /** A Content-Length that does not match the body: far too large (413 before reading) or too small. */
        private static Request lyingLength(Random random, String method, String path, byte[] body) {
            boolean huge = random.nextBoolean();
            String declared = huge ? Long.toString(1L << (33 + random.nextInt(20))) : Integer.toString(
                    random.nextInt(Math.max(1, body.length)));
            String head = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + declared + "\r\nConnection: close\r\n\r\n";
            byte[] headBytes = head.getBytes(StandardCharsets.UTF_8);
            byte[] all = java.util.Arrays.copyOf(headBytes, headBytes.length + body.length);
            System.arraycopy(body, 0, all, headBytes.length, body.length);
            // Bytes after a short Content-Length are a second, garbage request: the server may drop it silently.
            return new Request("lying-length", all, true);
        }

        private static byte[] randomBytes(Random random, int n) {
            byte[] bytes = new byte[n];
            random.nextBytes(bytes);
            return bytes;
        }

        private static byte[] mutate(Random random, byte[] good) {
            byte[] copy = good.clone();
            for (int k = 0; k < 1 + random.nextInt(4); k++) {
                copy[random.nextInt(copy.length)] = (byte) "{}[]\":,-0123456789eE.nulltrue \\"
                        .charAt(random.nextInt(31));
            }
            return copy;
        }

        /** Replaces the value after a random key with junk of another type or an absurd number. */
        private static byte[] replaceValue(Random random, byte[] good) {
            String json = new String(good, StandardCharsets.UTF_8);
            List<Integer> colons = new ArrayList<>();
            for (int k = 0; k < json.length(); k++) {
                if (json.charAt(k) == ':') {
                    colons.add(k);
                }
            }
            int at = colons.get(random.nextInt(colons.size())) + 1;
            int end = at;
            int depth = 0;
            boolean inString = false;
            while (end < json.length()) {
                char c = json.charAt(end);
                if (inString) {
                    if (c == '\\') {
                        end++;
                    } else if (c == '"') {
                        inString = false;
                    }
                } else if (c == '"') {
                    inString = true;
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    if (depth == 0) {
                        break;
                    }
                    depth--;
                } else if (c == ',' && depth == 0) {
                    break;
                }
                end++;
            }
            String junk = JUNK_VALUES[random.nextInt(JUNK_VALUES.length)];
            return (json.substring(0, at) + junk + json.substring(end)).getBytes(StandardCharsets.UTF_8);
        }

        private static byte[] nesting(Random random) {
            int depth = 50 + random.nextInt(20_000);
            String open = random.nextBoolean() ? "[" : "{\"a\":";
            String close = open.equals("[") ? "]" : "}";
            return (open.repeat(depth) + "1" + close.repeat(random.nextInt(depth + 1)))
                    .getBytes(StandardCharsets.UTF_8);
        }

        private static byte[] badGzip(Random random, byte[] good) {
            try {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
                    gz.write(random.nextBoolean() ? good : randomBytes(random, 512));
                }
                byte[] zipped = out.toByteArray();
                return switch (random.nextInt(3)) {
                    case 0 -> java.util.Arrays.copyOf(zipped, random.nextInt(zipped.length)); // truncated
                    case 1 -> {
                        zipped[10 + random.nextInt(zipped.length - 10)] ^= (byte) (1 + random.nextInt(255));
                        yield zipped; // corrupted
                    }
                    default -> randomBytes(random, 1 + random.nextInt(200)); // not gzip at all
                };
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        private byte[] hugeArray(Random random, int which) {
            String element = which == 2 ? "{\"step\":1,\"time_s\":1}" : "1";
            int n = 5_000 + random.nextInt(20_000);
            StringBuilder out = new StringBuilder(which == 0 ? "{\"host\":\"h\",\"agent_id\":\"a\",\"seq\":1,\"runs\":["
                    : which == 1 ? "{\"model\":[" : "[");
            for (int k = 0; k < n; k++) {
                out.append(k == 0 ? "" : ",").append(which == 0 ? "{\"run_id\":\"r" + (k % 2000) + "\"}" : element);
            }
            out.append(which == 2 ? "]" : "]}");
            return out.toString().getBytes(StandardCharsets.UTF_8);
        }
    }
}
