package dev.trainwatch.agent.ship;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLSocketFactory;

/**
 * Sends shipments over HTTP/1.1 with keep-alive: gzip JSON, the bearer token asked for on every request (a fixed
 * token file needs no restart). {@link HttpURLConnection} on the shipper's thread rather than java.net.http, whose
 * selector thread and futures cost more CPU than reading the GPUs; plain http without a proxy goes through
 * {@link PlainHttp}. Thread-safe; one shipper calls it at a time.
 */
public final class HttpTransport implements Transport {

    /** Enough for any answer to a batch (what it says about the batch's steps is read from it). */
    private static final int MAX_BODY_IN_LOG = 1024;

    /** Request header: when the request left the agent, on its clock, for the collector's clock offset (docs/API.md). */
    public static final String SENT_AT = "Trainwatch-Sent-At";

    private final String baseUrl;
    private final Supplier<String> token;
    private final int timeoutMillis;
    private final Clock clock;

    /** As below, with the system's wall clock as the agent's clock. */
    public HttpTransport(URI collectorUrl, Supplier<String> token, Duration requestTimeout) {
        this(collectorUrl, token, requestTimeout, Clock.systemUTC());
    }

    /**
     * @param collectorUrl   base URL, e.g. {@code http://10.0.0.5:9477}
     * @param token          bearer token supplier; null or a supplier of null for none
     * @param requestTimeout longest wait to connect, and for the answer
     * @param clock          the agent's clock, read for each request's {@value #SENT_AT}
     */
    public HttpTransport(URI collectorUrl, Supplier<String> token, Duration requestTimeout, Clock clock) {
        this(collectorUrl, token, requestTimeout, clock, null);
    }

    /**
     * The same, speaking TLS to an {@code https://} collector (see {@link ClientTls}).
     *
     * @param tls null for the JDK's defaults
     */
    public HttpTransport(URI collectorUrl, Supplier<String> token, Duration requestTimeout, Clock clock,
                         SSLSocketFactory tls) {
        this.tls = tls;
        String base = collectorUrl.toString();
        this.baseUrl = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.token = token != null ? token : () -> null;
        this.timeoutMillis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, requestTimeout.toMillis()));
        this.clock = clock;
        this.plain = plainHttpFor(collectorUrl) ? new PlainHttp(collectorUrl, timeoutMillis) : null;
    }

    /** Milliseconds since the epoch as seconds with three decimals ({@code 1767225599021} is "1767225599.021"). */
    static String seconds(long millis) {
        long ms = Math.floorMod(millis, 1000L);
        return Math.floorDiv(millis, 1000L) + (ms < 10 ? ".00" : ms < 100 ? ".0" : ".") + ms;
    }

    /** Plain {@code http://} without a configured proxy goes through {@link PlainHttp}. */
    static boolean plainHttpFor(URI collectorUrl) {
        return "http".equalsIgnoreCase(collectorUrl.getScheme()) && collectorUrl.getHost() != null
                && collectorUrl.getRawQuery() == null && collectorUrl.getRawFragment() == null
                && collectorUrl.getRawUserInfo() == null && System.getProperty("http.proxyHost") == null
                && System.getProperty("socksProxyHost") == null
                && !Boolean.getBoolean("java.net.useSystemProxies");
    }

    private final PlainHttp plain;
    private final SSLSocketFactory tls;

    private final CollectorNotices notices = new CollectorNotices();

    @Override
    public Response send(Shipment shipment) throws IOException {
        Response response = exchange(shipment);
        notices.read(response.body());
        return response;
    }

    private Response exchange(Shipment shipment) throws IOException {
        if (plain != null) {
            return plain.send(shipment.method(), shipment.path(), shipment.gzipBody(), token.get(),
                    seconds(clock.millis()), MAX_BODY_IN_LOG);
        }
        URL url = url(shipment.path());
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

    private String lastPath;
    private URL lastUrl;

    /** The URL of a path; the last one is kept (nearly every request is {@code /v1/samples}). */
    private synchronized URL url(String path) throws MalformedURLException {
        if (!path.equals(lastPath)) {
            lastUrl = URI.create(baseUrl + path).toURL();
            lastPath = path;
        }
        return lastUrl;
    }

    /** The start of the answer's body for log lines; the rest is drained so the connection can be reused. */
    private static String readStart(InputStream in) throws IOException {
        if (in == null) {
            return "";
        }
        try (in) {
            byte[] start = new byte[MAX_BODY_IN_LOG];
            int n = 0;
            int r;
            while (n < start.length && (r = in.read(start, n, start.length - n)) > 0) {
                n += r;
            }
            byte[] rest = new byte[512];
            while (in.read(rest) > 0) {
                // drained
            }
            return oneLine(new String(start, 0, n, StandardCharsets.UTF_8));
        }
    }

    /** {@code replaceAll("\\s+", " ").strip()} without compiling a pattern for every answer. */
    static String oneLine(String text) {
        StringBuilder out = new StringBuilder(text.length());
        boolean space = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r') {
                space = true;
                continue;
            }
            if (space && out.length() > 0) {
                out.append(' ');
            }
            space = false;
            out.append(c);
        }
        return out.toString().strip();
    }
}
