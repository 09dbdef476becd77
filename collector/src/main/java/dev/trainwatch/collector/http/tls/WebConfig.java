package dev.trainwatch.collector.http.tls;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The Prometheus exporter toolkit's web config file ({@code --web-config FILE}), its {@code tls_server_config} part;
 * paths are relative to the file, as the toolkit reads them. A key trainwatch does not serve (basic auth, cipher
 * suites, headers) is refused in one line rather than ignored. {@code tls} is null for plain HTTP. Immutable.
 */
public record WebConfig(Tls tls) {

    private static final List<String> VERSIONS = List.of("TLS10", "TLS11", "TLS12", "TLS13");
    private static final ObjectMapper YAML = YAMLMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    /** {@code tls_server_config}: PEM files, and the toolkit's version names ({@code TLS12}, {@code TLS13}). */
    public record Tls(Path certFile, Path keyFile, Path clientCaFile, ClientAuthType clientAuth, String minVersion,
                      String maxVersion) {

        /** The JDK's protocol names from {@code minVersion} to {@code maxVersion}. */
        public List<String> protocols() {
            List<String> out = new ArrayList<>();
            for (int i = VERSIONS.indexOf(minVersion); i <= VERSIONS.indexOf(maxVersion); i++) {
                out.add("TLSv1." + VERSIONS.get(i).charAt(4));
            }
            return out;
        }
    }

    /** The toolkit's {@code client_auth_type} values; in the file {@code NoClientCert} for {@code NO_CLIENT_CERT}. */
    public enum ClientAuthType {
        NO_CLIENT_CERT,
        REQUEST_CLIENT_CERT,
        REQUIRE_ANY_CLIENT_CERT,
        VERIFY_CLIENT_CERT_IF_GIVEN,
        REQUIRE_AND_VERIFY_CLIENT_CERT;

        public String configName() {
            return Arrays.stream(name().split("_")).map(w -> w.charAt(0) + w.substring(1).toLowerCase(Locale.ROOT))
                    .collect(Collectors.joining());
        }

        /** Whether a given certificate must chain to {@code client_ca_file}. */
        public boolean verifies() {
            return this == VERIFY_CLIENT_CERT_IF_GIVEN || this == REQUIRE_AND_VERIFY_CLIENT_CERT;
        }

        static ClientAuthType parse(String name) {
            String all = Arrays.stream(values()).map(ClientAuthType::configName).collect(Collectors.joining(", "));
            return Arrays.stream(values()).filter(type -> type.configName().equals(name)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("client_auth_type '" + name + "' is none of " + all));
        }
    }

    private record File(@JsonProperty("tls_server_config") TlsFile tlsServerConfig) {
    }

    private record TlsFile(@JsonProperty("cert_file") String certFile, @JsonProperty("key_file") String keyFile,
                           @JsonProperty("client_ca_file") String clientCaFile,
                           @JsonProperty("client_auth_type") String clientAuthType,
                           @JsonProperty("min_version") String minVersion,
                           @JsonProperty("max_version") String maxVersion) {
    }

    /** Reads and checks a web config file, whose certificate files must exist; one-line errors. */
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
                    + Errors.firstLine(e.getOriginalMessage(), ""));
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
        if (!VERSIONS.contains(v)) {
            throw new IllegalArgumentException(key + " '" + value + "' is none of " + String.join(", ", VERSIONS));
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
