package dev.trainwatch.collector.http;

import dev.trainwatch.collector.ingest.ApiError;
import dev.trainwatch.collector.ingest.BodyDecoder;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The query of {@code GET /v1/runs/{id}/plans}: {@code gpu} (catalog ids, comma-separated or repeated, at most
 * {@value #MAX_GPUS}; empty for the run's own), {@code gpus} and {@code batch} (per GPU; null keeps the run's).
 * Anything malformed is a 400 naming the parameter; nothing is clamped silently.
 */
record PlanParams(List<String> gpuIds, Integer gpus, Integer batch) {

    static final int MAX_GPUS = 16;
    private static final Pattern GPU_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final Pattern COUNT = Pattern.compile("[1-9][0-9]{0,6}");

    /** @throws ApiError 400 with a one-line message */
    static PlanParams parse(List<String> gpu, List<String> gpus, List<String> batch) {
        List<String> ids = new ArrayList<>();
        for (String value : gpu == null ? List.<String>of() : gpu) {
            for (String id : value.split(",", -1)) {
                String s = id.strip();
                if (!GPU_ID.matcher(s).matches()) {
                    throw ApiError.badRequest("gpu must be catalog GPU ids separated by commas (see"
                            + " trainwatch gpus), got '" + BodyDecoder.printable(s, 64) + "'");
                }
                if (!ids.contains(s)) {
                    ids.add(s);
                }
            }
        }
        if (ids.size() > MAX_GPUS) {
            throw ApiError.badRequest("gpu names " + ids.size() + " GPUs; at most " + MAX_GPUS + " at once");
        }
        return new PlanParams(List.copyOf(ids), count("gpus", gpus, 65_536), count("batch", batch, 1_000_000));
    }

    private static Integer count(String name, List<String> values, int max) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw ApiError.badRequest(name + " is given " + values.size() + " times; give it once");
        }
        String v = values.get(0).strip();
        if (!COUNT.matcher(v).matches() || Integer.parseInt(v) > max) {
            throw ApiError.badRequest(name + " must be a whole number from 1 to " + max + ", got '"
                    + BodyDecoder.printable(v, 32) + "'");
        }
        return Integer.parseInt(v);
    }
}
