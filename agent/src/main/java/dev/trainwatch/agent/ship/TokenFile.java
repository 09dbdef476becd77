package dev.trainwatch.agent.ship;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;

/**
 * The bearer token from a file (never the command line, visible in {@code ps}), re-read at most every
 * {@value #REREAD_SECONDS} s; an unreadable file keeps the last good token. Thread-safe.
 */
public final class TokenFile implements Supplier<String> {

    private static final long REREAD_SECONDS = 30;

    private final Path file;
    private String token;
    private long readAtNanos;

    private TokenFile(Path file, String token) {
        this.file = file;
        this.token = token;
        this.readAtNanos = System.nanoTime();
    }

    /** Reads the token now (first line, trimmed); IOException naming the file when it is unreadable or empty. */
    public static TokenFile read(Path file) throws IOException {
        return new TokenFile(file, readToken(file));
    }

    private static String readToken(Path file) throws IOException {
        String content;
        try {
            content = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IOException("cannot read token file " + file + ": " + e.getClass().getSimpleName(), e);
        }
        // A UTF-8 byte-order mark (editors on Windows write one) is not part of the token.
        if (content.startsWith("\uFEFF")) {
            content = content.substring(1);
        }
        String first = content.lines().map(String::strip).filter(l -> !l.isEmpty()).findFirst().orElse("");
        if (first.isEmpty()) {
            throw new IOException("token file " + file + " is empty");
        }
        return first;
    }

    @Override
    public synchronized String get() {
        if (System.nanoTime() - readAtNanos > REREAD_SECONDS * 1_000_000_000L) {
            readAtNanos = System.nanoTime();
            try {
                token = readToken(file);
            } catch (IOException e) {
                // Keep the last good token: a file being rewritten must not make every request unauthorised.
            }
        }
        return token;
    }
}
