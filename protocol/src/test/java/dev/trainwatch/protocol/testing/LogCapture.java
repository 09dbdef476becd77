package dev.trainwatch.protocol.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The messages one logger (and the loggers below it) writes while this is open: a test's view of the one-line logs a
 * user would read. Close it to stop listening. Thread-safe.
 */
public final class LogCapture extends Handler implements AutoCloseable {
    private final Logger logger;
    private final List<String> messages = new ArrayList<>();

    private LogCapture(Logger logger) {
        this.logger = logger;
    }

    /** Starts listening to the logger named {@code name}. */
    public static LogCapture of(String name) {
        LogCapture capture = new LogCapture(Logger.getLogger(name));
        capture.logger.addHandler(capture);
        return capture;
    }

    /** The messages written so far, oldest first. */
    public synchronized List<String> messages() {
        return List.copyOf(messages);
    }

    /** Forgets the messages so far. */
    public synchronized void clear() {
        messages.clear();
    }

    @Override
    public synchronized void publish(LogRecord record) {
        messages.add(record.getMessage());
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
