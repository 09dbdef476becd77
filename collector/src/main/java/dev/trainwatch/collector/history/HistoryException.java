package dev.trainwatch.collector.history;

/** The history database cannot be opened or written. The message is one line naming the file and the cause. */
public class HistoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HistoryException(String message, Throwable cause) {
        super(message, cause);
    }
}
