package dev.trainwatch.collector.http.tls;

import dev.trainwatch.protocol.Errors;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.vertx.core.Vertx;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.net.TrustOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The collector's TLS from a {@link WebConfig}: the server options, and the certificate, key and client CA files
 * reloaded when their contents change (new connections use them). A file that cannot be used is one line and the
 * server keeps the certificates it has. The checks run on the server's event loop.
 */
public final class ServerTls {

    private static final System.Logger LOG = System.getLogger(ServerTls.class.getName());
    public static final Duration DEFAULT_RELOAD_EVERY = Duration.ofSeconds(5);

    private final WebConfig.Tls tls;
    private final Duration reloadEvery;
    private String loadedFingerprint;
    private String failedFingerprint;
    private long timer = -1;

    public ServerTls(WebConfig.Tls tls, Duration reloadEvery) {
        this.tls = Objects.requireNonNull(tls, "tls");
        this.reloadEvery = Objects.requireNonNull(reloadEvery, "reloadEvery");
    }

    /** Turns TLS on in {@code options} with the files as they are now. */
    public HttpServerOptions applyTo(HttpServerOptions options) {
        ServerSSLOptions ssl = sslOptions();
        loadedFingerprint = fingerprint();
        return options.setSsl(true)
                .setKeyCertOptions(ssl.getKeyCertOptions())
                .setTrustOptions(ssl.getTrustOptions())
                .setClientAuth(ssl.getClientAuth())
                .setEnabledSecureTransportProtocols(ssl.getEnabledSecureTransportProtocols());
    }

    ServerSSLOptions sslOptions() {
        ServerSSLOptions ssl = new ServerSSLOptions()
                .setKeyCertOptions(new PemKeyCertOptions().setCertPath(tls.certFile().toString())
                        .setKeyPath(tls.keyFile().toString()))
                .setClientAuth(clientAuth(tls.clientAuth()))
                .setEnabledSecureTransportProtocols(new LinkedHashSet<>(tls.protocols()));
        TrustOptions trust = trust(tls);
        if (trust != null) {
            ssl.setTrustOptions(trust);
        }
        return ssl;
    }

    private static TrustOptions trust(WebConfig.Tls tls) {
        if (tls.clientAuth().verifies()) {
            return new PemTrustOptions().addCertPath(tls.clientCaFile().toString());
        }
        if (tls.clientAuth() == WebConfig.ClientAuthType.REQUEST_CLIENT_CERT
                || tls.clientAuth() == WebConfig.ClientAuthType.REQUIRE_ANY_CLIENT_CERT) {
            // The toolkit's "any" certificate: asked for, not checked against a CA.
            return TrustOptions.wrap(InsecureTrustManagerFactory.INSTANCE);
        }
        return null;
    }

    static ClientAuth clientAuth(WebConfig.ClientAuthType type) {
        return switch (type) {
            case NO_CLIENT_CERT -> ClientAuth.NONE;
            case REQUEST_CLIENT_CERT, VERIFY_CLIENT_CERT_IF_GIVEN -> ClientAuth.REQUEST;
            case REQUIRE_ANY_CLIENT_CERT, REQUIRE_AND_VERIFY_CLIENT_CERT -> ClientAuth.REQUIRED;
        };
    }

    /** Starts checking the files for {@code server}, which listens with {@link #applyTo} options. */
    public void watch(Vertx vertx, HttpServer server) {
        timer = vertx.setPeriodic(reloadEvery.toMillis(), id -> reloadIfChanged(server));
    }

    public void stop(Vertx vertx) {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
            timer = -1;
        }
    }

    private void reloadIfChanged(HttpServer server) {
        String now = fingerprint();
        if (now.equals(loadedFingerprint) || now.equals(failedFingerprint)) {
            return;
        }
        // force: the paths are the same as before, only the files' contents changed.
        server.updateSSLOptions(sslOptions(), true).onComplete(result -> {
            if (result.succeeded()) {
                loadedFingerprint = now;
                failedFingerprint = null;
                LOG.log(System.Logger.Level.INFO, "TLS certificates reloaded from " + tls.certFile());
            } else {
                failedFingerprint = now;
                LOG.log(System.Logger.Level.WARNING, "cannot use the changed TLS files (" + tls.certFile() + ", "
                        + tls.keyFile() + "): " + Errors.oneLine(result.cause()) + "; serving with the previous ones");
            }
        });
    }

    /** A hash of each file (an absent one counts too); they are a few kilobytes. */
    private String fingerprint() {
        List<Path> files = Stream.of(tls.certFile(), tls.keyFile(), tls.clientCaFile())
                .filter(Objects::nonNull).toList();
        StringBuilder out = new StringBuilder();
        for (Path file : files) {
            try {
                out.append(Arrays.hashCode(Files.readAllBytes(file))).append(';');
            } catch (IOException e) {
                out.append("absent;");
            }
        }
        return out.toString();
    }
}
