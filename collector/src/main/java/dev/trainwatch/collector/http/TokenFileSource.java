package dev.trainwatch.collector.http;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The bearer token from {@code --token-file}, re-read (at most once a second) when the file's time or size changes,
 * so a rotated token is taken without a restart; a file being rewritten, emptied or removed keeps the last good
 * token, with one line. A UTF-8 BOM is not part of the token. Thread-safe.
 */
public final class TokenFileSource implements Supplier<String> {

    private static final System.Logger LOG = System.getLogger(TokenFileSource.class.getName());
    private static final long CHECK_EVERY_NANOS = 1_000_000_000L;

    private final Path file;
    private final LongSupplier nanoTime;
    private volatile String token;
    private long checkedAt;
    private FileTime modified;
    private long size;
    private String problem;

    private TokenFileSource(Path file, String token, LongSupplier nanoTime) {
        this.file = file;
        this.token = token;
        this.nanoTime = nanoTime;
        this.checkedAt = nanoTime.getAsLong();
        remember();
    }

    /** Reads the token now; throws {@link IllegalArgumentException} with one line naming the file and the problem. */
    public static TokenFileSource open(Path file) {
        return open(file, System::nanoTime);
    }

    static TokenFileSource open(Path file, LongSupplier nanoTime) {
        warnIfEveryoneMayRead(file);
        return new TokenFileSource(file, read(file), nanoTime);
    }

    /** The token a file holds: its text without a BOM and surrounding white space, on one line. */
    public static String read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("token file " + file + " does not exist");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read token file " + file + " (" + e.getClass().getSimpleName()
                    + "): give the collector's user read access to it, e.g. chmod 0640 and chgrp its group");
        }
        String token = (text.startsWith("\uFEFF") ? text.substring(1) : text).strip();
        if (token.isEmpty()) {
            throw new IllegalArgumentException("token file " + file + " is empty");
        }
        if (token.lines().count() > 1) {
            throw new IllegalArgumentException("token file " + file + " must hold the token on one line");
        }
        return token;
    }

    /** One line when every user of the machine may read the token. */
    static void warnIfEveryoneMayRead(Path file) {
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
            if (permissions.contains(PosixFilePermission.OTHERS_READ)) {
                LOG.log(System.Logger.Level.WARNING, "token file " + file + " is readable by every user of this"
                        + " machine, who could then write to the collector: chmod 0600 " + file);
            }
        } catch (IOException | UnsupportedOperationException e) {
            // Not a POSIX file system, or not readable: reading it says what matters.
        }
    }

    @Override
    public String get() {
        long now = nanoTime.getAsLong();
        synchronized (this) {
            if (now - checkedAt >= CHECK_EVERY_NANOS) {
                checkedAt = now;
                reloadIfChanged();
            }
        }
        return token;
    }

    private void reloadIfChanged() {
        FileTime wasModified = modified;
        long wasSize = size;
        remember();
        if (modified != null && modified.equals(wasModified) && size == wasSize) {
            return;
        }
        try {
            String fresh = read(file);
            if (!fresh.equals(token)) {
                LOG.log(System.Logger.Level.INFO, "token file " + file + " changed: the new token is in force");
                warnIfEveryoneMayRead(file);
            }
            token = fresh;
            problem = null;
        } catch (IllegalArgumentException e) {
            if (!e.getMessage().equals(problem)) {
                problem = e.getMessage();
                LOG.log(System.Logger.Level.WARNING, e.getMessage() + "; the previous token stays in force");
            }
        }
    }

    private void remember() {
        try {
            modified = Files.getLastModifiedTime(file);
            size = Files.size(file);
        } catch (IOException e) {
            modified = null;
            size = -1;
        }
    }
}
