package dev.trainwatch.protocol;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.FileSystemException;

/** Exceptions as one line for a log or a user (never a stack trace), and the close whose failure loses nothing. */
public final class Errors {
    private Errors() {
    }

    /** The message's first line, stripped; the exception's simple class name when the message is missing or blank. */
    public static String oneLine(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : firstLine(message, "");
    }

    /** A file system's reason alone (the caller names the file), else {@link #oneLine}. */
    public static String reason(Throwable e) {
        return e instanceof FileSystemException fse && fse.getReason() != null ? fse.getReason() : oneLine(e);
    }

    /** The first line of {@code text}, stripped; {@code ifNull} when there is no text. */
    public static String firstLine(String text, String ifNull) {
        return text == null ? ifNull : text.lines().findFirst().orElse("").strip();
    }

    /** Closes {@code c} (if any), ignoring a failure: for what loses nothing by it (read-only, written through). */
    public static void closeQuietly(Closeable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing to lose
        }
    }
}
