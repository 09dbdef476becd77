package dev.trainwatch.cli;

import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.http.TokenFileSource;
import dev.trainwatch.collector.state.GpuHourPrices;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/** The collector options of every command that runs one (collector, demo): token, alerts; parsed in one place. */
final class CollectorOptions {

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "File holding the bearer token that ingest and PUT requests must send.")
    Path tokenFile;

    @Option(names = "--alertmanager", paramLabel = "URL", description = "Alertmanager to send alerts to.")
    String alertmanager;

    @Option(names = "--webhook", paramLabel = "URL", description = "Webhook to POST alerts to.")
    String webhook;

    @Option(names = "--external-url", paramLabel = "URL",
            description = "The address people reach the page at (a DNS name, a proxy), e.g."
                    + " https://trainwatch.example.org/; alerts, webhooks and the log link to each run's page there."
                    + " Default: the address the collector listens on.")
    String externalUrl;

    @Option(names = "--gpu-hour-price", paramLabel = "PRICE",
            description = "What one GPU-hour costs, in your currency: one number for every GPU (2.5), or prices by"
                    + " GPU id with * for the rest (a100-80gb=1.79,h100-sxm=2.49,*=2). Each run then shows its cost"
                    + " so far and projected to total_steps.")
    String gpuHourPrice;

    @Option(names = "--max-gpus", paramLabel = "N", defaultValue = "" + CollectorConfig.Limits.DEFAULT_MAX_GPUS,
            description = "GPUs tracked at once (default: ${DEFAULT-VALUE}). Beyond it a batch bringing a new GPU is"
                    + " refused with 429 and its agent spools and retries. The launcher sizes the heap from it"
                    + " (docs/DEPLOY.md, \"Sizing\").")
    int maxGpus;

    @Option(names = "--max-agents", paramLabel = "N", defaultValue = "" + CollectorConfig.Limits.DEFAULT_MAX_AGENTS,
            description = "Agents tracked at once (default: ${DEFAULT-VALUE}); beyond it a new agent is refused with"
                    + " 429 and retries.")
    int maxAgents;

    @Option(names = "--max-runs", paramLabel = "N", defaultValue = "" + CollectorConfig.Limits.DEFAULT_MAX_RUNS,
            description = "Runs tracked at once (default: ${DEFAULT-VALUE}); beyond it a new run is refused with 429"
                    + " while every run is live.")
    int maxRuns;

    @Option(names = "--max-specs", paramLabel = "N", defaultValue = "" + CollectorConfig.Limits.DEFAULT_MAX_SPECS,
            description = "Runs held only as a spec, waiting for their run to report (default: ${DEFAULT-VALUE}, at"
                    + " most --max-runs); beyond it PUT /v1/runs/{id} is refused with 429.")
    int maxSpecs;

    @Option(names = "--gpu-series", paramLabel = "auto|on|off", defaultValue = "auto",
            description = "Whether /metrics carries the per-GPU series (default: ${DEFAULT-VALUE}: on up to 4,096"
                    + " --max-gpus, off above, where each node's agent serves them with --listen).")
    String gpuSeries;

    @picocli.CommandLine.Mixin
    CatalogOption catalog = new CatalogOption();

    /**
     * {@code config} with what these options name, refused when it would expose the collector unprotected; mistakes
     * are one-line usage errors before anything starts.
     */
    CollectorConfig applyTo(CollectorConfig config) {
        CollectorConfig applied = config.withAlerting(url("--alertmanager", alertmanager), url("--webhook", webhook))
                .withExternalUrl(url("--external-url", externalUrl))
                .withCatalogFiles(catalog.files());
        CatalogOption.load(applied.userCatalogs());
        if (tokenFile != null) {
            applied = applied.withToken(TokenFileSource.read(tokenFile));
        }
        applied = applied.withLimits(limits(applied.limits())).withGpuSeries(gpuSeriesMode());
        if (gpuHourPrice != null) {
            applied = applied.withGpuHourPrices(gpuHourPrices(gpuHourPrice));
        }
        applied.checkExposure();
        return applied;
    }

    /** The limits with the caps these options name; a cap below 1 or specs above runs is a usage error. */
    CollectorConfig.Limits limits(CollectorConfig.Limits base) {
        try {
            return base.withCaps(maxRuns, maxGpus, maxAgents, Math.min(maxSpecs, maxRuns));
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, "--max-runs, --max-gpus, --max-agents and --max-specs must be"
                    + " positive: " + e.getMessage());
        }
    }

    /** {@code --gpu-hour-price} (collector, estimate); {@link GpuHourPrices#NONE} (NaN for every GPU) without one. */
    static GpuHourPrices gpuHourPrices(String value) {
        try {
            return value == null ? GpuHourPrices.NONE : GpuHourPrices.parse(value);
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, "--gpu-hour-price: " + e.getMessage());
        }
    }

    /** {@code --gpu-series}: null for auto. */
    Boolean gpuSeriesMode() {
        return switch (gpuSeries.strip().toLowerCase(Locale.ROOT)) {
            case "auto" -> null;
            case "on" -> Boolean.TRUE;
            case "off" -> Boolean.FALSE;
            default -> throw new UserError(ExitCodes.USAGE, "--gpu-series wants auto, on or off, got '" + gpuSeries
                    + "'");
        };
    }

    /**
     * An http(s) URL option ({@code --collector}, {@code --webhook}, …), null when not given. The scheme is read in
     * any case (RFC 3986) and given back in lower case. One message for anything else, a URL without its scheme
     * ({@code 10.0.0.5:9477}) included.
     */
    static URI url(String option, String value) {
        if (value == null) {
            return null;
        }
        String v = value.strip();
        try {
            URI uri = new URI(v);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null) {
                return scheme.equals(uri.getScheme()) ? uri : new URI(scheme + v.substring(scheme.length()));
            }
        } catch (URISyntaxException e) {
            // said below
        }
        throw new UserError(ExitCodes.USAGE, option + " wants an http(s) URL such as http://HOST:PORT, got '" + value
                + "'");
    }
}
