package dev.trainwatch.collector.http.tls;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The web config file of the Prometheus exporter toolkit ({@code --web-config FILE}), the part trainwatch serves:
 * {@code tls_server_config} with {@code cert_file}, {@code key_file}, {@code client_ca_file},
 * {@code client_auth_type}, {@code min_version} and {@code max_version}. File paths are relative to the config
 * file's directory, as the toolkit reads them. A key the toolkit has and trainwatch does not serve (basic auth,
 * cipher suites, HTTP headers) is refused, in one line, rather than silently ignored. Immutable.
 *
 * @param tls the TLS settings, or null when the file has no {@code tls_server_config} (plain HTTP, as the toolkit)
 */
public record WebConfig(Tls tls) {

    private static final ObjectMapper YAML = YAMLMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    /**
     * {@code tls_server_config}.
     *
     * @param certFile       the server's certificate chain, PEM
     * @param keyFile        its private key, PEM (PKCS#8, PKCS#1 RSA or SEC1 EC)
     * @param clientCaFile   the CAs that client certificates must chain to, PEM; null for none
     * @param clientAuth     what is asked of clients
     * @param minVersion     lowest TLS version accepted ({@code TLS12} when not given, as the toolkit)
     * @param maxVersion     highest TLS version accepted ({@code TLS13} when not given)
     */
    public record Tls(Path certFile, Path keyFile, Path clientCaFile, ClientAuthType clientAuth, String minVersion,
                      String maxVersion) {

        /** The JDK's protocol names from {@code minVersion} to {@code maxVersion}, e.g. TLSv1.2, TLSv1.3. */
        public List<String> protocols() {
            List<String> all = List.of("TLS10", "TLS11", "TLS12", "TLS13");
            List<String> out = new ArrayList<>();
            for (int i = all.indexOf(minVersion); i <= all.indexOf(maxVersion); i++) {
                out.add("TLSv1." + all.get(i).charAt(4));
            }
            return out;
        }
    }

    /** The toolkit's {@code client_auth_type} values. */
    public enum ClientAuthType {
        /** No certificate is asked for. */
        NO_CLIENT_CERT("NoClientCert"),
        /** A certificate is asked for, not required, and not verified. */
        REQUEST_CLIENT_CERT("RequestClientCert"),
        /** A certificate is required, and not verified. */
        REQUIRE_ANY_CLIENT_CERT("RequireAnyClientCert"),
        /** A certificate is asked for; one that is given must chain to {@code client_ca_file}. */
        VERIFY_CLIENT_CERT_IF_GIVEN("VerifyClientCertIfGiven"),
        /** A certificate that chains to {@code client_ca_file} is required (mutual TLS). */
        REQUIRE_AND_VERIFY_CLIENT_CERT("RequireAndVerifyClientCert");

        private final String configName;

        ClientAuthType(String configName) {
            this.configName = configName;
        }

        /** The name in the web config. */
        public String configName() {
            return configName;
        }

        /** Whether a given certificate must chain to {@code client_ca_file}. */
        public boolean verifies() {
            return this == VERIFY_CLIENT_CERT_IF_GIVEN || this == REQUIRE_AND_VERIFY_CLIENT_CERT;
        }

        static ClientAuthType parse(String name) {
            for (ClientAuthType type : values()) {
                if (type.configName.equals(name)) {
                    return type;
                }
            }
            throw new IllegalArgumentException("client_auth_type '" + name + "' is none of NoClientCert,"
                    + " RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert");
        }
    }

    /** The file's shape, as Jackson reads it. */
    private record File(@JsonProperty("tls_server_config") TlsFile tlsServerConfig) {
    }

    private record TlsFile(@JsonProperty("cert_file") String certFile, @JsonProperty("key_file") String keyFile,
                           @JsonProperty("client_ca_file") String clientCaFile,
                           @JsonProperty("client_auth_type") String clientAuthType,
                           @JsonProperty("min_version") String minVersion,
                           @JsonProperty("max_version") String maxVersion) {
    }

    /**
     * Reads and checks a web config file; the certificate files must exist (they are read when the server starts).
     *
     * @throws IllegalArgumentException one line naming the file and what is wrong in it
     */
    public static WebConfig read(Path file) {
        File parsed;
        try {
            String text = Files.readString(file);
            parsed = text.isBlank() ? new File(null) : YAML.readValue(text, File.class);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("web config " + file + " does not exist");
        } catch (UnrecognizedPropertyException e) {
            throw new IllegalArgumentException("web config " + file + ": '" + e.getPropertyName()
                    + "' is not supported by trainwatch (it serves tls_server_config: cert_file, key_file,"
                    + " client_ca_file, client_auth_type, min_version, max_version)");
        } catch (JsonMappingException e) {
            throw new IllegalArgumentException("web config " + file + " is not a valid web config: "
                    + e.getOriginalMessage().lines().findFirst().orElse(""));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read web config " + file + ": " + e.getMessage());
        }
        if (parsed == null || parsed.tlsServerConfig() == null) {
            return new WebConfig(null);
        }
        Path base = file.toAbsolutePath().getParent();
        try {
            return new WebConfig(tls(parsed.tlsServerConfig(), base));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("web config " + file + ": " + e.getMessage());
        }
    }

    private static Tls tls(TlsFile t, Path base) {
        if (t.certFile() == null || t.keyFile() == null) {
            throw new IllegalArgumentException("tls_server_config needs both cert_file and key_file");
        }
        ClientAuthType auth;
        if (t.clientAuthType() != null) {
            auth = ClientAuthType.parse(t.clientAuthType());
        } else {
            // The toolkit's default: a client CA alone means mutual TLS.
            auth = t.clientCaFile() != null ? ClientAuthType.REQUIRE_AND_VERIFY_CLIENT_CERT
                    : ClientAuthType.NO_CLIENT_CERT;
        }
        if (auth.verifies() && t.clientCaFile() == null) {
            throw new IllegalArgumentException("client_auth_type " + auth.configName() + " needs client_ca_file");
        }
        String min = version("min_version", t.minVersion(), "TLS12");
        String max = version("max_version", t.maxVersion(), "TLS13");
        if (min.compareTo(max) > 0) {
            throw new IllegalArgumentException("min_version " + min + " is above max_version " + max);
        }
        return new Tls(existing(base, "cert_file", t.certFile()), existing(base, "key_file", t.keyFile()),
                t.clientCaFile() == null ? null : existing(base, "client_ca_file", t.clientCaFile()), auth, min, max);
    }

    private static String version(String key, String value, String otherwise) {
        if (value == null) {
            return otherwise;
        }
        String v = value.strip().toUpperCase(Locale.ROOT);
        if (!List.of("TLS10", "TLS11", "TLS12", "TLS13").contains(v)) {
            throw new IllegalArgumentException(key + " '" + value + "' is none of TLS10, TLS11, TLS12, TLS13");
        }
        return v;
    }

    private static Path existing(Path base, String key, String value) {
        Path path = base.resolve(value.strip());
        if (!Files.isReadable(path)) {
            throw new IllegalArgumentException(key + " " + path + (Files.exists(path)
                    ? " cannot be read: give the collector's user read access to it"
                    : " does not exist"));
        }
        return path;
    }
}
