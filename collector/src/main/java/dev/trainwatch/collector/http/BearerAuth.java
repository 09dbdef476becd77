package dev.trainwatch.collector.http;

import dev.trainwatch.collector.ingest.ApiError;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.Supplier;

/**
 * Checks {@code Authorization: Bearer <token>} headers, comparing SHA-256 digests with {@link MessageDigest#isEqual}
 * (time independent of the secret); the current token is asked for on each check (it may rotate). Thread-safe.
 */
public final class BearerAuth {
    private static final String SCHEME = "bearer ";

    private final Supplier<String> token;
    /** The token last asked for and its digest, computed again only when it changes. */
    private volatile Expected expected;

    private record Expected(String token, byte[] digest) {
    }

    /** Per-node tokens accepted beside the shared one. */
    private final NodeTokens nodes;

    /** @param token the current secret on each call, or a supplier of null when none is configured (all pass) */
    public BearerAuth(Supplier<String> token) {
        this(token, NodeTokens.NONE);
    }

    /** @param nodes per-node tokens accepted beside the shared one (each speaks only for its node) */
    public BearerAuth(Supplier<String> token, NodeTokens nodes) {
        this.token = token;
        this.nodes = nodes;
    }

    public boolean enabled() {
        return expectedDigest() != null;
    }

    private byte[] expectedDigest() {
        String current = token.get();
        if (current == null) {
            return null;
        }
        Expected known = expected;
        if (known == null || !known.token().equals(current)) {
            known = new Expected(current, sha256(current));
            expected = known;
        }
        return known.digest();
    }

    /** Passes or throws {@link ApiError} 401 saying whether the token was missing or wrong. */
    public void check(String authorization) {
        checkNode(authorization);
    }

    /** As {@link #check}; returns the node a per-node token belongs to (lower case), else null. */
    public String checkNode(String authorization) {
        byte[] expectedDigest = expectedDigest();
        if (expectedDigest == null) {
            return null;
        }
        if (authorization == null || authorization.isBlank()) {
            throw new ApiError(ApiError.UNAUTHORIZED, "missing bearer token: send 'Authorization: Bearer <token>'");
        }
        // The scheme is case-insensitive (RFC 9110 §11.1); the token itself is compared exactly.
        if (authorization.length() < SCHEME.length()
                || !authorization.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
            throw new ApiError(ApiError.UNAUTHORIZED, "the Authorization header must use the Bearer scheme");
        }
        String presented = authorization.substring(SCHEME.length()).strip();
        if (MessageDigest.isEqual(expectedDigest, sha256(presented))) {
            return null;
        }
        String node = nodes.hostOf(presented);
        if (node == null) {
            throw new ApiError(ApiError.UNAUTHORIZED, "wrong bearer token");
        }
        return node;
    }

    static String digestHex(String token) {
        return HexFormat.of().formatHex(sha256(token));
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
