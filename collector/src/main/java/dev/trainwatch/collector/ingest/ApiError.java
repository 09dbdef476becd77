package dev.trainwatch.collector.ingest;

/**
 * A request the collector refuses, with the HTTP status it deserves and a one-line message for the client. Thrown by
 * the plain-Java request steps (decoding, validation, auth) and turned into {@code {"error": "…"}} at the edge.
 */
public final class ApiError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public static final int BAD_REQUEST = 400;
    public static final int UNAUTHORIZED = 401;
    public static final int FORBIDDEN = 403;
    public static final int NOT_FOUND = 404;
    public static final int METHOD_NOT_ALLOWED = 405;
    public static final int CONFLICT = 409;
    public static final int TOO_LARGE = 413;
    public static final int UNSUPPORTED_MEDIA_TYPE = 415;
    public static final int UNPROCESSABLE = 422;
    public static final int TOO_MANY_REQUESTS = 429;
    public static final int SERVICE_UNAVAILABLE = 503;

    private final int status;

    public ApiError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }

    public static ApiError badRequest(String message) {
        return new ApiError(BAD_REQUEST, message);
    }

    public static ApiError unprocessable(String message) {
        return new ApiError(UNPROCESSABLE, message);
    }

    public static ApiError tooLarge(String message) {
        return new ApiError(TOO_LARGE, message);
    }
}
