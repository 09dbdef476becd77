package dev.trainwatch.agent.ship;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * The agent's side of TLS to an {@code https://} collector, from PEM files as an operator's PKI (or cert-manager)
 * hands them out, with the JDK alone: the CAs to trust ({@code --ca-file}; the JDK's own when not given) and, for
 * mutual TLS, the agent's certificate chain and its private key ({@code --cert-file}, {@code --key-file}; PKCS#8
 * "PRIVATE KEY", RSA, EC or Ed25519). Immutable; the socket factory it makes is thread-safe.
 *
 * @param caFile   PEM certificates of the CAs the collector's certificate must chain to, or null for the JDK's
 * @param certFile PEM certificate chain of this agent (mutual TLS), or null
 * @param keyFile  PEM private key of {@code certFile}, or null
 */
public record ClientTls(Path caFile, Path certFile, Path keyFile) {

    /** Plain defaults: the JDK's trusted CAs, no client certificate. */
    public static final ClientTls NONE = new ClientTls(null, null, null);

    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]+?)\\s*-----END \\1-----");
    private static final char[] NO_PASSWORD = new char[0];

    public ClientTls {
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("--cert-file and --key-file go together (mutual TLS needs both)");
        }
    }

    /** Whether anything differs from the JDK's defaults. */
    public boolean configured() {
        return caFile != null || certFile != null;
    }

    /**
     * The socket factory for connections to the collector.
     *
     * @throws IOException one line naming the file that cannot be used and why
     */
    public SSLSocketFactory socketFactory() throws IOException {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(certFile == null ? null : keyManagers(), caFile == null ? null : trustManagers(), null);
            return context.getSocketFactory();
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot set up TLS to the collector: " + e.getMessage(), e);
        }
    }

    private TrustManager[] trustManagers() throws IOException, GeneralSecurityException {
        Collection<? extends Certificate> cas = certificates(caFile, "--ca-file");
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        int i = 0;
        for (Certificate ca : cas) {
            store.setCertificateEntry("ca-" + i++, ca);
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(store);
        return factory.getTrustManagers();
    }

    private KeyManager[] keyManagers() throws IOException, GeneralSecurityException {
        List<Certificate> chain = new ArrayList<>(certificates(certFile, "--cert-file"));
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        store.setKeyEntry("agent", privateKey(keyFile), NO_PASSWORD, chain.toArray(new Certificate[0]));
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(store, NO_PASSWORD);
        return factory.getKeyManagers();
    }

    private static Collection<? extends Certificate> certificates(Path file, String option) throws IOException {
        byte[] pem = read(file, option);
        try {
            Collection<? extends Certificate> all = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem));
            if (all.isEmpty()) {
                throw new IOException(option + " " + file + " holds no PEM certificate");
            }
            return all;
        } catch (GeneralSecurityException e) {
            throw new IOException(option + " " + file + " holds no readable PEM certificate: " + e.getMessage(), e);
        }
    }

    /** A PKCS#8 key ({@code BEGIN PRIVATE KEY}) of any algorithm the JDK knows. */
    static PrivateKey privateKey(Path file) throws IOException {
        String text = new String(read(file, "--key-file"), StandardCharsets.US_ASCII);
        Matcher m = PEM.matcher(text);
        if (!m.find()) {
            throw new IOException("--key-file " + file + " holds no PEM private key");
        }
        if (!m.group(1).equals("PRIVATE KEY")) {
            throw new IOException("--key-file " + file + " holds a '" + m.group(1) + "'; the agent reads unencrypted"
                    + " PKCS#8 keys: convert it with openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pkcs8.pem");
        }
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(2)));
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException notThisOne) {
                // The encoding names its algorithm; the first factory that reads it is the one.
            }
        }
        throw new IOException("--key-file " + file + " is not an RSA, EC or Ed25519 private key");
    }

    private static byte[] read(Path file, String option) throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IOException(option + ": cannot read " + file + " (" + e.getClass().getSimpleName()
                    + (Files.exists(file) ? "; give the agent's user read access to it)" : ")"), e);
        }
    }
}
