package dev.trainwatch.collector.http;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Per-node bearer tokens ({@code --node-tokens FILE}, one {@code HOST TOKEN} pair a line, {@code #} comments): a
 * batch sent with a node's token may speak only for that node's {@code host}. Immutable.
 */
public final class NodeTokens {

    /** Node by the hex SHA-256 of its token: a lookup's time depends on the digest, not on the secret. */
    private final Map<String, String> hostByToken;

    private NodeTokens(Map<String, String> hostByToken) {
        this.hostByToken = Map.copyOf(hostByToken);
    }

    /** No node tokens. */
    public static final NodeTokens NONE = new NodeTokens(Map.of());

    /** Reads a node-token file; throws {@link IllegalArgumentException}, one line naming the file and line. */
    public static NodeTokens read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read node-token file " + file + " ("
                    + e.getClass().getSimpleName() + "): give the collector's user read access to it");
        }
        TokenFileSource.warnIfEveryoneMayRead(file);
        Map<String, String> hostByToken = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = (i == 0 && lines.get(0).startsWith("\uFEFF") ? lines.get(0).substring(1) : lines.get(i))
                    .strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split("\\s+");
            if (fields.length != 2) {
                throw new IllegalArgumentException("node-token file " + file + ", line " + (i + 1)
                        + ": want HOST TOKEN");
            }
            if (hostByToken.put(BearerAuth.digestHex(fields[1]), fields[0].toLowerCase(Locale.ROOT)) != null) {
                throw new IllegalArgumentException("node-token file " + file + ", line " + (i + 1)
                        + ": the same token for two nodes");
            }
        }
        return new NodeTokens(hostByToken);
    }

    /** The node a token belongs to (lower case), or null when it is none of them. */
    String hostOf(String token) {
        return hostByToken.isEmpty() ? null : hostByToken.get(BearerAuth.digestHex(token));
    }
}
