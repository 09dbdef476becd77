package dev.trainwatch.protocol;

/** Exceptions and messages as one line for a log or a user (never a stack trace). */
public final class Errors {
    private Errors() {
    }

    /** The message's first line, stripped; the exception's simple class name when the message is missing or blank. */
    public static String oneLine(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : firstLine(message, "");
    }

    /** The first line of {@code text}, stripped; {@code ifNull} when there is no text. */
    public static String firstLine(String text, String ifNull) {
        return text == null ? ifNull : text.lines().findFirst().orElse("").strip();
    }
}
