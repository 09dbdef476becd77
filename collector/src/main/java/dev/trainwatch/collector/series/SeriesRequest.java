package dev.trainwatch.collector.series;

/**
 * What a caller of {@code GET /v1/runs/{id}/series} asked for (docs/API.md), already validated by the HTTP edge;
 * {@code sinceTs} null for everything the collector still holds. Immutable.
 */
public record SeriesRequest(Double sinceTs, int maxPoints, boolean includeGpus) {

    /** Fewest points a caller may ask for: below it the first, last and a few middle points say nothing. */
    public static final int MIN_POINTS = 10;
    /** Most points per series: bounds the response (see {@link SeriesBuilder#MAX_GPU_POINTS}). */
    public static final int MAX_POINTS = 2_000;
    /** Without {@code max_points}: one point a second over the default ten-minute window. */
    public static final int DEFAULT_POINTS = 600;

    public SeriesRequest {
        if (maxPoints < MIN_POINTS || maxPoints > MAX_POINTS) {
            throw new IllegalArgumentException("maxPoints must be from " + MIN_POINTS + " to " + MAX_POINTS);
        }
        if (sinceTs != null && !Double.isFinite(sinceTs)) {
            throw new IllegalArgumentException("sinceTs must be finite");
        }
    }

    public static SeriesRequest defaults() {
        return new SeriesRequest(null, DEFAULT_POINTS, true);
    }
}
