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
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything the collector needs to start: where it listens, the bearer token (if any), limits on what a client may
 * send, where alerts go and where history is kept. Immutable; build with {@link #defaults()} and the {@code with…}
 * methods.
 *
 * @param host            address to listen on; loopback unless a token is set (see {@link #checkExposure()})
 * @param port            TCP port; 0 picks a free one (tests)
 * @param token           bearer token required on ingest and {@code PUT}, or null for none
 * @param dataDir         directory for history (SQLite), or null to keep nothing across restarts
 * @param alertmanagerUrl Alertmanager base URL for alert delivery, or null
 * @param webhookUrl      webhook URL for alert delivery, or null
 * @param limits          what one request may contain
 * @param tickInterval    how often the fleet re-evaluates runs (detectors, agent_lost) without new input
 * @param clock           wall clock for the fleet and the metric windows; inject a fixed one in tests
 * @param summaryInterval how often at most a run's changed summary (last step, step time, peak memory, …) is
 *                        written to the history; a SIGKILL can lose about two intervals of it. Zero writes every change
 * @param externalUrl     the address users reach the collector's page at (behind a proxy, a DNS name), used for the
 *                        run links in alerts and webhooks; null for the address it listens on
 * @param gpuHourPrices   what a GPU-hour costs, for each run's cost so far and projected; {@link GpuHourPrices#NONE}
 *                        for none
 * @param catalogFiles    user catalog files (GPUs, models, encoders) added to the bundled catalogs at start, before
 *                        {@code catalog.json} in the data directory when there is one
 * @param gpuSeries       whether {@code /metrics} carries the per-GPU series ({@code --gpu-series on|off}); null for
 *                        auto: on for a small fleet ({@code --max-gpus} at most {@value #GPU_SERIES_AUTO_MAX_GPUS}),
 *                        off above, where each agent serves its node's series ({@code trainwatch agent --listen})
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

    /** A config without user catalog files (the bundled catalogs plus {@code catalog.json} in the data directory). */
    public CollectorConfig(String host, int port, String token, Path dataDir, URI alertmanagerUrl, URI webhookUrl,
            Limits limits, Duration tickInterval, Clock clock, Duration summaryInterval, URI externalUrl,
            GpuHourPrices gpuHourPrices) {
        this(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval, clock, summaryInterval,
                externalUrl, gpuHourPrices, List.of(), null);
    }

    /** The largest {@code --max-gpus} for which the collector exports per-GPU series unless told. */
    public static final int GPU_SERIES_AUTO_MAX_GPUS = 4_096;

    /** Whether {@code /metrics} carries the per-GPU series: as told, else for a fleet of at most 4,096 GPUs. */
    public boolean exportsGpuSeries() {
        return gpuSeries != null ? gpuSeries : limits.maxGpus() <= GPU_SERIES_AUTO_MAX_GPUS;
    }

    /** The same config exporting per-GPU series ({@code true}), not ({@code false}) or as the size says (null). */
    public CollectorConfig withGpuSeries(Boolean exported) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, externalUrl, gpuHourPrices, catalogFiles, exported);
    }

    /** The documented default address. */
    public static final String DEFAULT_HOST = "127.0.0.1";
    /** The documented default port. */
    public static final int DEFAULT_PORT = 9477;
    /** The documented default summary interval. */
    public static final Duration DEFAULT_SUMMARY_INTERVAL = Duration.ofSeconds(2);
    /** The longest summary interval accepted: a kill can lose about two intervals, so at most two minutes. */
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

    /**
     * 127.0.0.1:9477, no token, no history, default limits, 1 s tick, the system's wall clock advanced monotonically
     * ({@link MonotonicClock}: ages and windows are real durations when the wall clock is stepped), 2 s summary
     * interval.
     */
    public static CollectorConfig defaults() {
        return new CollectorConfig(DEFAULT_HOST, DEFAULT_PORT, null, null, null, null, Limits.defaults(),
                Duration.ofSeconds(1), MonotonicClock.system(), DEFAULT_SUMMARY_INTERVAL, null, GpuHourPrices.NONE);
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

    public CollectorConfig withTickInterval(Duration newTickInterval) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, newTickInterval,
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

    /**
     * The external address of the page, e.g. {@code https://trainwatch.example.org/}; it must be http(s) with a
     * host, and ends in {@code /}.
     */
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

    /** The same config with user catalog files (none: an empty list). */
    public CollectorConfig withCatalogFiles(List<Path> newCatalogFiles) {
        return new CollectorConfig(host, port, token, dataDir, alertmanagerUrl, webhookUrl, limits, tickInterval,
                clock, summaryInterval, externalUrl, gpuHourPrices, newCatalogFiles, gpuSeries);
    }

    /**
     * The user catalog files this collector reads at start: {@link #catalogFiles()}, then {@code catalog.json} in the
     * data directory when that file exists.
     */
    public List<Path> userCatalogs() {
        List<Path> all = new ArrayList<>(catalogFiles);
        if (dataDir != null && Files.isRegularFile(dataDir.resolve("catalog.json"))) {
            all.add(dataDir.resolve("catalog.json"));
        }
        return List.copyOf(all);
    }

    /** The token, when one is set. */
    public Optional<String> bearerToken() {
        return Optional.ofNullable(token);
    }

    /**
     * Refuses an address other hosts can reach unless a token protects ingest: an open collector on a cluster
     * network would let anyone rewrite runs and raise alerts.
     *
     * @throws IllegalArgumentException with a one-line message saying what to do
     */
    public void checkExposure() {
        if (token == null && !isLoopback(host)) {
            throw new IllegalArgumentException("refusing to listen on " + host
                    + " without a token: other machines could write to it; pass --token-file FILE"
                    + " or listen on 127.0.0.1");
        }
    }

    /** True for loopback names and addresses ({@code localhost}, {@code 127.x}, {@code ::1}). */
    public static boolean isLoopback(String host) {
        try {
            InetAddress[] all = InetAddress.getAllByName(host);
            for (InetAddress address : all) {
                if (!address.isLoopbackAddress()) {
                    return false;
                }
            }
            return all.length > 0;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * Parses {@code HOST:PORT}, {@code :PORT} (default host) or {@code [v6]:PORT}.
     *
     * @throws IllegalArgumentException with a one-line message
     */
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
     * What one request may contain, and how much the collector tracks at once. The body limits are checked on the
     * declared {@code Content-Length} before reading, again while the body streams in, and on the inflated size of a
     * gzip body. Beyond a tracking cap a request is refused with 429 and {@code Retry-After} (an agent spools and
     * retries), never accepted and dropped.
     *
     * @param maxBodyBytes         largest body on the wire
     * @param maxInflatedBytes     largest body after gzip decompression
     * @param maxGpuSamples        GPU samples in one agent batch
     * @param maxStepEvents        step events in one request
     * @param maxRuns              runs the collector tracks at once ({@code --max-runs}); a new run id beyond it is
     *                             refused (metric cardinality stays bounded whatever clients send)
     * @param maxGpus              GPUs tracked at once ({@code --max-gpus}); the heap the launcher gives the collector
     *                             grows with it (docs/DEPLOY.md, "Sizing")
     * @param maxAgents            agents tracked at once ({@code --max-agents})
     * @param maxSpecs             runs held only as a spec, waiting for their run to report ({@code --max-specs}); at
     *                             most {@code maxRuns}
     */
    public record Limits(long maxBodyBytes, long maxInflatedBytes, int maxGpuSamples, int maxStepEvents,
                         int maxRuns, int maxGpus, int maxAgents, int maxSpecs) {

        /** Runs tracked at once by default. */
        public static final int DEFAULT_MAX_RUNS = 1_024;
        /** GPUs tracked at once by default: what the launcher's default heap holds (docs/PERFORMANCE.md). */
        public static final int DEFAULT_MAX_GPUS = 4_096;
        /** Agents tracked at once by default: a node of 8 GPUs and a run's own agent or two beside its node agent. */
        public static final int DEFAULT_MAX_AGENTS = 1_024;
        /** Specs waiting for their run by default: a quarter of the runs, so they never crowd out runs that report. */
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

        /** These request limits with the default tracking caps (the spec cap at most the run cap). */
        public Limits(long maxBodyBytes, long maxInflatedBytes, int maxGpuSamples, int maxStepEvents, int maxRuns) {
            this(maxBodyBytes, maxInflatedBytes, maxGpuSamples, maxStepEvents, maxRuns, DEFAULT_MAX_GPUS,
                    DEFAULT_MAX_AGENTS, Math.min(DEFAULT_MAX_SPECS, maxRuns));
        }

        /** These limits with other tracking caps. */
        public Limits withCaps(int runs, int gpus, int agents, int specs) {
            return new Limits(maxBodyBytes, maxInflatedBytes, maxGpuSamples, maxStepEvents, runs, gpus, agents, specs);
        }

        /**
         * 4 MiB on the wire and 16 MiB inflated: a 64-GPU batch is about 60 KB, so a full minute of 100 ms polls
         * of 8 GPUs still fits. 4,096 samples and 10,000 steps per request; 1,024 runs, 4,096 GPUs, 1,024 agents,
         * 256 specs.
         */
        public static Limits defaults() {
            return new Limits(4L << 20, 16L << 20, 4_096, 10_000, DEFAULT_MAX_RUNS);
        }
    }
}
