package dev.trainwatch.estimator;

/** A run spec the estimator cannot price: unknown id, impossible value. The message is one line for a user. */
public class InvalidSpecException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InvalidSpecException(String message) {
        super(message);
    }
}
