package dev.trainwatch.collector.config;

import dev.trainwatch.collector.state.GpuHourPrices;
import dev.trainwatch.protocol.MonotonicClock;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Everything the collector needs to start (the options of {@code trainwatch collector}, docs/DEPLOY.md). Immutable;
 * build with {@link #defaults()} and the {@code with…} methods.
 *
 * @param token           bearer token required on ingest and {@code PUT}, or null for none
 * @param dataDir         directory for history (SQLite), or null to keep nothing across restarts
 * @param summaryInterval the shortest time between two history writes of a run's summary (a kill loses about two)
 * @param externalUrl     the page's address for run links in alerts, or null for the address it listens on
 * @param gpuSeries       whether {@code /metrics} carries per-GPU series; null for auto (see {@link #exportsGpuSeries})
 */
public record CollectorConfig(
        String host,
        int port,
        String token,
        Path dataDir,
        URI alertmanagerUrl,
        URI webhookUrl,
        Limits limits,
        Duration tickInterval,
        Clock clock,
        Duration summaryInterval,
        URI externalUrl,
        GpuHourPrices gpuHourPrices,
        List<Path> catalogFiles,
        Boolean gpuSeries) {

    /** Per-GPU series on {@code /metrics}: as told, else up to 4,096 GPUs (above, each agent serves its node's). */
    public boolean exportsGpuSeries() {
        return gpuSeries != null ? gpuSeries : limits.maxGpus() <= 4_096;
    }

    public CollectorConfig withGpuSeries(Boolean exported) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, exported);
    }

    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 9477;
    public static final Duration DEFAULT_SUMMARY_INTERVAL = Duration.ofSeconds(2);
    public static final Duration MAX_SUMMARY_INTERVAL = Duration.ofMinutes(1);

    public CollectorConfig {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(tickInterval, "tickInterval");
        Objects.requireNonNull(clock, "clock");
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be 0–65535, got " + port);
        }
        if (token != null && token.isBlank()) {
            throw new IllegalArgumentException("the token is empty");
        }
        if (tickInterval.isNegative() || tickInterval.isZero()) {
            throw new IllegalArgumentException("tick interval must be positive");
        }
        catalogFiles = catalogFiles == null ? List.of() : List.copyOf(catalogFiles);
        Objects.requireNonNull(summaryInterval, "summaryInterval");
        Objects.requireNonNull(gpuHourPrices, "gpuHourPrices");
        if (summaryInterval.isNegative() || summaryInterval.compareTo(MAX_SUMMARY_INTERVAL) > 0) {
            throw new IllegalArgumentException("summary interval must be 0–60 s, got "
                    + summaryInterval.toMillis() + " ms");
        }
    }

    /** 127.0.0.1:9477, no token, no history, 1 s tick, a monotonic wall clock (windows survive a clock step). */
    public static CollectorConfig defaults() {
        return new CollectorConfig(DEFAULT_HOST, DEFAULT_PORT, null, null, null, null, Limits.defaults(),
                Duration.ofSeconds(1), MonotonicClock.system(), DEFAULT_SUMMARY_INTERVAL, null, GpuHourPrices.NONE,
                List.of(), null);
    }

    public CollectorConfig withListen(String newHost, int newPort) {
        return new CollectorConfig(newHost, newPort, token, dataDir, alertmanagerUrl, webhookUrl, limits,
                tickInterval, clock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withToken(String newToken) {
        return new CollectorConfig(host, port, newToken, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withDataDir(Path newDataDir) {
        return new CollectorConfig(host, port, token, newDataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withAlerting(URI newAlertmanagerUrl, URI newWebhookUrl) {
        return new CollectorConfig(host, port, token, dataDir, newAlertmanagerUrl, newWebhookUrl, limits,
                tickInterval, clock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withLimits(Limits newLimits) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, newLimits, tickInterval,
                clock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withSummaryInterval(Duration newSummaryInterval) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, newSummaryInterval, externalUrl, gpuHourPrices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withGpuHourPrices(GpuHourPrices prices) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, externalUrl, prices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withClock(Clock newClock) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                newClock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, gpuSeries);
    }

    /** The page's external address: http(s) with a host, normalised to end in {@code /}. */
    public CollectorConfig withExternalUrl(URI newExternalUrl) {
        URI normalized = newExternalUrl;
        if (newExternalUrl != null) {
            if (!("http".equals(newExternalUrl.getScheme()) || "https".equals(newExternalUrl.getScheme()))
                    || newExternalUrl.getHost() == null) {
                throw new IllegalArgumentException("the external URL must be http(s)://host[:port][/path], got '"
                        + newExternalUrl + "'");
            }
            normalized = newExternalUrl.toString().endsWith("/") ? newExternalUrl
                    : URI.create(newExternalUrl + "/");
        }
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, normalized, gpuHourPrices, catalogFiles, gpuSeries);
    }

    public CollectorConfig withCatalogFiles(List<Path> newCatalogFiles) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, externalUrl, gpuHourPrices, newCatalogFiles, gpuSeries);
    }

    /** The user catalogs read at start: {@link #catalogFiles()}, then the data directory's {@code catalog.json}. */
    public List<Path> userCatalogs() {
        List<Path> all = new ArrayList<>(catalogFiles);
        if (dataDir != null && Files.isRegularFile(dataDir.resolve("catalog.json"))) {
            all.add(dataDir.resolve("catalog.json"));
        }
        return List.copyOf(all);
    }

    /** Refuses an address other hosts can reach without a token: anyone could rewrite runs and raise alerts. */
    public void checkExposure() {
        if (token == null && !isLoopback(host)) {
            throw new IllegalArgumentException("refusing to listen on " + host
                    + " without a token: other machines could write to it; pass --token-file FILE"
                    + " or listen on 127.0.0.1");
        }
    }

    public static boolean isLoopback(String host) {
        try {
            InetAddress[] all = InetAddress.getAllByName(host);
            return all.length > 0 && Arrays.stream(all).allMatch(InetAddress::isLoopbackAddress);
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** Parses {@code HOST:PORT}, {@code :PORT} (default host) or {@code [v6]:PORT}; one-line errors. */
    public CollectorConfig withListen(String hostPort) {
        String value = hostPort.strip();
        int colon = value.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("--listen wants HOST:PORT, got '" + hostPort + "'");
        }
        String hostPart = value.substring(0, colon);
        if (hostPart.startsWith("[") && hostPart.endsWith("]")) {
            hostPart = hostPart.substring(1, hostPart.length() - 1);
        }
        if (hostPart.isEmpty()) {
            hostPart = DEFAULT_HOST;
        }
        int parsedPort;
        try {
            parsedPort = Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--listen wants HOST:PORT with a numeric port, got '" + hostPort + "'");
        }
        if (parsedPort < 0 || parsedPort > 65_535) {
            throw new IllegalArgumentException("--listen port must be 0–65535, got " + parsedPort);
        }
        return withListen(hostPart, parsedPort);
    }

    /**
     * What one request may contain, and how much the collector tracks at once ({@code --max-runs}, {@code --max-gpus},
     * {@code --max-agents}, {@code --max-specs}). Beyond a tracking cap a request is refused with 429 and
     * {@code Retry-After} (an agent spools and retries), never accepted and dropped.
     */
    public record Limits(long maxBodyBytes, long maxInflatedBytes, int maxGpuSamples, int maxStepEvents,
                         int maxRuns, int maxGpus, int maxAgents, int maxSpecs) {

        public static final int DEFAULT_MAX_RUNS = 1_024;
        /** What the launcher's default heap holds. */
        public static final int DEFAULT_MAX_GPUS = 4_096;
        public static final int DEFAULT_MAX_AGENTS = 1_024;
        /** A quarter of the runs, so specs never crowd out runs that report. */
        public static final int DEFAULT_MAX_SPECS = 256;

        public Limits {
            if (maxBodyBytes <= 0 || maxInflatedBytes <= 0 || maxGpuSamples <= 0 || maxStepEvents <= 0
                    || maxRuns <= 0 || maxGpus <= 0 || maxAgents <= 0 || maxSpecs <= 0) {
                throw new IllegalArgumentException("limits must be positive");
            }
            if (maxSpecs > maxRuns) {
                throw new IllegalArgumentException("--max-specs (" + maxSpecs + ") cannot exceed --max-runs ("
                        + maxRuns + "): a spec holds a run's slot");
            }
        }

        public Limits withCaps(int runs, int gpus, int agents, int specs) {
            return new Limits(maxBodyBytes, maxInflatedBytes, maxGpuSamples, maxStepEvents, runs, gpus, agents, specs);
        }

        /** 4 MiB on the wire, 16 MiB inflated: a minute of 100 ms polls of 8 GPUs still fits. */
        public static Limits defaults() {
            return new Limits(4L << 20, 16L << 20, 4_096, 10_000, DEFAULT_MAX_RUNS, DEFAULT_MAX_GPUS,
                    DEFAULT_MAX_AGENTS, DEFAULT_MAX_SPECS);
        }
    }
}
