package dev.trainwatch.collector.alerting;

/** A receiver did not accept a delivery. The message is one line. */
public class DeliveryException extends Exception {
    private static final long serialVersionUID = 1L;
    private final boolean retryable;

    public DeliveryException(String message, boolean retryable) {
        super(message);
        this.retryable = retryable;
    }

    /** False for answers that will not change on a retry (e.g. a 400 from the receiver). */
    public boolean retryable() {
        return retryable;
    }
}
