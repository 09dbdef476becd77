package dev.trainwatch.agent.ship;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLSocketFactory;

/**
 * Sends shipments over HTTP/1.1 with keep-alive: gzip JSON, the bearer token asked for on every request (a fixed
 * token file needs no restart). {@link HttpURLConnection} on the shipper's thread rather than java.net.http, whose
 * selector thread and futures cost more CPU than reading the GPUs. Thread-safe; one shipper calls it at a time.
 */
public final class HttpTransport implements Transport {

    private static final System.Logger LOG = System.getLogger(HttpTransport.class.getName());
    private static final String CLASH = "agent_id_clash";

    /** Enough for any answer to a batch (what it says about the batch's steps is read from it). */
    private static final int MAX_BODY_IN_LOG = 1024;

    /** Request header: when the request left the agent, on its clock, for the collector's clock offset (docs/API.md). */
    public static final String SENT_AT = "Trainwatch-Sent-At";

    private final String baseUrl;
    private final Supplier<String> token;
    private final int timeoutMillis;
    private final Clock clock;

    /** As below, with the system's wall clock as the agent's clock and the JDK's TLS. */
    public HttpTransport(URI collectorUrl, Supplier<String> token, Duration requestTimeout) {
        this(collectorUrl, token, requestTimeout, Clock.systemUTC(), null);
    }

    /**
     * {@code collectorUrl}: base URL, e.g. {@code http://10.0.0.5:9477}; {@code token}: null or a supplier of null for
     * none; {@code requestTimeout}: to connect, and for the answer; {@code clock}: read for each {@value #SENT_AT};
     * {@code tls}: for an {@code https://} collector ({@link ClientTls}), null for the JDK's.
     */
    public HttpTransport(URI collectorUrl, Supplier<String> token, Duration requestTimeout, Clock clock,
                         SSLSocketFactory tls) {
        this.tls = tls;
        String base = collectorUrl.toString();
        this.baseUrl = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.token = token != null ? token : () -> null;
        this.timeoutMillis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, requestTimeout.toMillis()));
        this.clock = clock;
    }

    /** Milliseconds since the epoch as seconds with three decimals ({@code 1767225599021} is "1767225599.021"). */
    static String seconds(long millis) {
        long ms = Math.floorMod(millis, 1000L);
        return Math.floorDiv(millis, 1000L) + (ms < 10 ? ".00" : ms < 100 ? ".0" : ".") + ms;
    }

    private static final Pattern WHITE_SPACE = Pattern.compile("\\s+");

    private final SSLSocketFactory tls;

    private final AtomicBoolean clashLogged = new AtomicBoolean();

    @Override
    public Response send(Shipment shipment) throws IOException {
        Response response = exchange(shipment);
        readNotice(response.body());
        return response;
    }

    /**
     * Says once per process what an answer tells the operator: another node sends under this agent's id
     * ({@code agent_id_clash}: a cloned image or spool directory).
     */
    void readNotice(String body) {
        if (body == null || !body.contains(CLASH) || clashLogged.get()) {
            return;
        }
        try {
            JsonNode clash = Json.MAPPER.readTree(body).get(CLASH);
            if (clash != null && clash.isTextual() && clashLogged.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "the collector says: " + clash.asText());
            }
        } catch (IOException notWholeJson) {
            // The body was cut at the log limit; the next answer is read again.
        }
    }

    private Response exchange(Shipment shipment) throws IOException {
        URL url = URI.create(baseUrl + shipment.path()).toURL();
        HttpURLConnection connection = (HttpURLConnection) url.openConnection();
        if (tls != null && connection instanceof HttpsURLConnection https) {
            https.setSSLSocketFactory(tls);
        }
        try {
            byte[] body = shipment.gzipBody();
            connection.setConnectTimeout(timeoutMillis);
            connection.setReadTimeout(timeoutMillis);
            connection.setInstanceFollowRedirects(false);
            connection.setUseCaches(false);
            connection.setRequestMethod(shipment.method());
            connection.setDoOutput(true);
            connection.setFixedLengthStreamingMode(body.length);
            connection.setRequestProperty("Content-Type", "application/json");
            connection.setRequestProperty("Content-Encoding", "gzip");
            connection.setRequestProperty(SENT_AT, seconds(clock.millis()));
            String bearer = token.get();
            if (bearer != null && !bearer.isEmpty()) {
                connection.setRequestProperty("Authorization", "Bearer " + bearer);
            }
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body);
            }
            int status = connection.getResponseCode();
            if (status < 0) {
                throw new IOException("not an HTTP answer from " + baseUrl);
            }
            return new Response(status, readStart(status >= 400 ? connection.getErrorStream()
                    : connection.getInputStream()));
        } catch (IOException | RuntimeException e) {
            // A connection that failed half-way is not reused.
            connection.disconnect();
            throw e;
        }
    }

    /** The start of the answer's body for log lines; the rest is drained so the connection can be reused. */
    private static String readStart(InputStream in) throws IOException {
        if (in == null) {
            return "";
        }
        try (in) {
            byte[] start = in.readNBytes(MAX_BODY_IN_LOG);
            in.transferTo(OutputStream.nullOutputStream());
            return WHITE_SPACE.matcher(new String(start, StandardCharsets.UTF_8)).replaceAll(" ").strip();
        }
    }
}
