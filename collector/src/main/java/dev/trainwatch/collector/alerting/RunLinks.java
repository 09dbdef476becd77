package dev.trainwatch.collector.alerting;

import java.net.InetAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * Links to a run's page ({@code <base>#/runs/<run_id>}) for alerts: {@code --external-url}, else the address it
 * listens on (a wildcard becomes this machine's host name, so the link works elsewhere). Thread-safe.
 */
public final class RunLinks {
    private volatile URI base;

    public RunLinks(URI externalUrl) {
        this.base = externalUrl;
    }

    /** Sets the base to the listening address, unless an external address was configured. */
    public void listening(String host, int port, boolean tls) {
        if (base == null) {
            base = address(host, port, tls, () -> {
                try {
                    return InetAddress.getLocalHost().getCanonicalHostName();
                } catch (UnknownHostException e) {
                    return "localhost";
                }
            });
        }
    }

    /** {@code http(s)://host:port/}: a wildcard host becomes {@code wildcardAs}, an IPv6 one is bracketed. */
    public static URI address(String host, int port, boolean tls, Supplier<String> wildcardAs) {
        String h = host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]") ? wildcardAs.get() : host;
        if (h.contains(":") && !h.startsWith("[")) {
            h = "[" + h + "]";
        }
        return URI.create((tls ? "https://" : "http://") + h + ":" + port + "/");
    }

    /** Null before the server listens. */
    public String runPage(String runId) {
        URI b = base;
        if (b == null || runId == null) {
            return null;
        }
        return b + "#/runs/" + URLEncoder.encode(runId, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
