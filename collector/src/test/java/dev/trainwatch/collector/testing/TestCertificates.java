package dev.trainwatch.collector.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Certificates made at test time with the JDK's {@code keytool}: a CA, and PEM files of certificates it signed
 * with their PKCS#8 private keys, as an operator's PKI hands them out. Nothing is checked in, nothing expires.
 */
public final class TestCertificates {

    private static final String PASSWORD = "test-only";

    private final Path dir;

    private TestCertificates(Path dir) {
        this.dir = dir;
    }

    /** A new CA named {@code name} in {@code dir}; its certificate is {@link #caFile()}. */
    public static TestCertificates newCa(Path dir, String name) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        TestCertificates ca = new TestCertificates(dir);
        ca.keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-ext", "bc:c", "-validity", "3", "-keystore", ca.store("ca").toString());
        ca.keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.store("ca").toString(),
                "-file", ca.caFile().toString());
        return ca;
    }

    /** The CA's certificate, PEM. */
    public Path caFile() {
        return dir.resolve("ca.pem");
    }

    /**
     * A certificate for {@code name} signed by this CA, valid for {@code localhost} and {@code 127.0.0.1}, written as
     * {@code name.pem} (the certificate) and {@code name-key.pem} (its key, PKCS#8).
     */
    public Issued issue(String name) throws IOException, InterruptedException, GeneralSecurityException {
        Path store = store(name);
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                "-validity", "3", "-keystore", store.toString());
        Path request = dir.resolve(name + ".csr");
        keytool("-certreq", "-alias", name, "-keystore", store.toString(), "-file", request.toString());
        Path cert = dir.resolve(name + ".pem");
        keytool("-gencert", "-alias", "ca", "-keystore", store("ca").toString(), "-infile", request.toString(),
                "-outfile", cert.toString(), "-rfc", "-validity", "3",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1");
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, PASSWORD.toCharArray());
        }
        Key key = keys.getKey(name, PASSWORD.toCharArray());
        Path keyFile = dir.resolve(name + "-key.pem");
        Files.writeString(keyFile, "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                + "\n-----END PRIVATE KEY-----\n");
        return new Issued(cert, keyFile);
    }

    /** A certificate and its key, PEM files. */
    public record Issued(Path certFile, Path keyFile) {
    }

    /** A TLS context that trusts this CA's certificates (and presents {@code client}'s when not null). */
    public SSLContext clientContext(Issued client) throws GeneralSecurityException, IOException {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(caFile())) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (client != null) {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(store(client.certFile().getFileName().toString()
                    .replace(".pem", "")))) {
                keys.load(in, PASSWORD.toCharArray());
            }
            List<Certificate> chain = new ArrayList<>();
            try (InputStream in = Files.newInputStream(client.certFile())) {
                chain.addAll(CertificateFactory.getInstance("X.509").generateCertificates(in));
            }
            String alias = keys.aliases().nextElement();
            keys.setKeyEntry(alias, keys.getKey(alias, PASSWORD.toCharArray()), PASSWORD.toCharArray(),
                    chain.toArray(new Certificate[0]));
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, PASSWORD.toCharArray());
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }

    private Path store(String name) {
        return dir.resolve(name + ".p12");
    }

    private void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD, "-noprompt"));
        if (args[0].equals("-genkeypair")) {
            command.addAll(List.of("-keypass", PASSWORD));
        }
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
        }
    }
}
