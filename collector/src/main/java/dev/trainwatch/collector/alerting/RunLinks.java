package dev.trainwatch.collector.alerting;

import java.net.InetAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;

/**
 * Links to a run's page ({@code <base>#/runs/<run_id>}) for alerts, webhooks and the log: the page shows the run's
 * evidence, the fix and the charts, where {@code GET /v1/runs/<id>} is raw JSON. The base is the collector's
 * {@code --external-url}, else the address it listens on (a wildcard address becomes this machine's host name, so
 * the link works from another machine). Thread-safe: the base is set once the server knows its port.
 */
public final class RunLinks {
    private volatile URI base;

    /** @param externalUrl the configured external address ending in {@code /}, or null until {@link #listening} */
    public RunLinks(URI externalUrl) {
        this.base = externalUrl;
    }

    /** When no external address was configured: links use the address the server listens on, over plain HTTP. */
    public void listening(String host, int port) {
        listening(host, port, false);
    }

    /** The same, {@code https://} when the server speaks TLS. */
    public void listening(String host, int port, boolean tls) {
        if (base != null) {
            return;
        }
        String h = host;
        if (h.equals("0.0.0.0") || h.equals("::") || h.equals("[::]")) {
            try {
                h = InetAddress.getLocalHost().getCanonicalHostName();
            } catch (UnknownHostException e) {
                h = "localhost";
            }
        }
        if (h.contains(":") && !h.startsWith("[")) {
            h = "[" + h + "]";
        }
        base = URI.create((tls ? "https://" : "http://") + h + ":" + port + "/");
    }

    /** The page's root, or null before the server listens. */
    public URI base() {
        return base;
    }

    /** The run's page, or null before the server listens. */
    public String runPage(String runId) {
        URI b = base;
        if (b == null || runId == null) {
            return null;
        }
        return b + "#/runs/" + URLEncoder.encode(runId, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
