package dev.trainwatch.cli;

import dev.trainwatch.collector.CollectorConfig;
import dev.trainwatch.collector.http.TokenFileSource;
import dev.trainwatch.collector.state.GpuHourPrices;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The collector's options that every command running a collector takes ({@code collector}, {@code demo}): the
 * bearer token, where alerts go. One place, so the commands parse and check them the same way.
 */
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

    @picocli.CommandLine.Mixin
    CatalogOption catalog = new CatalogOption();

    /**
     * {@code config} with the token, alert receivers, prices and user catalogs these options name; mistakes are
     * one-line usage errors (a wrong catalog is refused here, before anything starts).
     */
    CollectorConfig applyTo(CollectorConfig config) {
        CollectorConfig applied = config.withAlerting(url("--alertmanager", alertmanager), url("--webhook", webhook))
                .withExternalUrl(url("--external-url", externalUrl))
                .withCatalogFiles(catalog.files());
        CatalogOption.load(applied.userCatalogs());
        if (tokenFile != null) {
            applied = applied.withToken(readToken(tokenFile));
        }
        if (gpuHourPrice != null) {
            try {
                applied = applied.withGpuHourPrices(GpuHourPrices.parse(gpuHourPrice));
            } catch (IllegalArgumentException e) {
                throw new UserError(ExitCodes.USAGE, "--gpu-hour-price: " + e.getMessage());
            }
        }
        return applied;
    }

    static String readToken(Path file) {
        try {
            return TokenFileSource.read(file);
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, e.getMessage());
        }
    }

    static URI url(String option, String value) {
        if (value == null) {
            return null;
        }
        try {
            URI uri = new URI(value.strip());
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new UserError(ExitCodes.USAGE, option + " wants an http(s) URL, got '" + value + "'");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new UserError(ExitCodes.USAGE, option + " is not a valid URL: '" + value + "'");
        }
    }
}
