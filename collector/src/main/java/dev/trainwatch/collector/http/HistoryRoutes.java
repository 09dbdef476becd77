package dev.trainwatch.collector.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.history.CalibratingPredictor;
import dev.trainwatch.collector.history.CalibrationFactors;
import dev.trainwatch.collector.history.Calibrator;
import dev.trainwatch.collector.history.HistoryStore;
import dev.trainwatch.collector.history.StoredAnomaly;
import dev.trainwatch.collector.history.StoredRun;
import dev.trainwatch.collector.ingest.ApiError;
import dev.trainwatch.collector.ingest.BodyDecoder;
import dev.trainwatch.protocol.Json;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code GET /v1/history}: past runs with how far their prediction was off, the alert history, and the
 * calibration in force. Reads SQLite off the event loop. Without a data directory the lists are empty and
 * {@code "persistent": false} says why.
 */
public final class HistoryRoutes {
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1_000;
    private final Optional<HistoryStore> store;
    private final CalibratingPredictor predictor;
    private final BearerAuth auth;
    private final Clock clock;

    /** @param auth checks the bearer token that changes to the calibration need (the collector's current one) */
    public HistoryRoutes(Optional<HistoryStore> store, CalibratingPredictor predictor, BearerAuth auth,
                         Clock clock) {
        this.store = store;
        this.predictor = predictor;
        this.auth = auth;
        this.clock = clock;
    }

    public void register(Router router) {
        router.get("/v1/history").handler(this::history);
        router.get("/v1/calibration").handler(ctx -> send(ctx, 200, Map.of("calibration", calibration())));
        router.post("/v1/calibration/runs/:run_id/exclude").handler(ctx -> exclude(ctx, true));
        router.post("/v1/calibration/runs/:run_id/include").handler(ctx -> exclude(ctx, false));
        router.delete("/v1/calibration/:gpu/:family").handler(this::reset);
    }

    /** Leaves a finished run out of calibration, or counts it again, and recalibrates. */
    private void exclude(RoutingContext ctx, boolean exclude) {
        auth.check(ctx.request().getHeader(HttpHeaders.AUTHORIZATION));
        String runId = ApiVerticle.runIdOf(ctx);
        change(ctx, s -> {
            boolean known = s.outcomes().stream().anyMatch(o -> o.runId().equals(runId));
            if (!known) {
                return "no finished run '" + runId + "' in the calibration history";
            }
            s.excludeFromCalibration(runId, exclude, clock.instant());
            return null;
        });
    }

    /** Starts a (GPU, family) group afresh: the runs recorded so far no longer count. */
    private void reset(RoutingContext ctx) {
        auth.check(ctx.request().getHeader(HttpHeaders.AUTHORIZATION));
        String key = Calibrator.key(ctx.pathParam("gpu"), ctx.pathParam("family"));
        change(ctx, s -> {
            boolean known = predictor.factors().stream().anyMatch(f -> Calibrator.key(f.gpuId(), f.family()).equals(key));
            if (!known) {
                return "no calibration for " + BodyDecoder.printable(key, 128) + "; see GET /v1/calibration";
            }
            s.resetCalibration(key, clock.instant());
            return null;
        });
    }

    /** Applies a change to the store off the event loop, recalibrates, answers with the calibration. */
    private void change(RoutingContext ctx, Function<HistoryStore, String> change) {
        if (store.isEmpty()) {
            throw new ApiError(ApiError.CONFLICT,
                    "calibration needs the run history: start the collector with --data-dir");
        }
        HistoryStore s = store.get();
        ctx.vertx().executeBlocking(() -> {
            String problem = change.apply(s);
            if (problem == null) {
                predictor.recalibrate(Calibrator.factors(s));
            }
            return problem;
        }).onComplete(result -> {
            if (result.failed()) {
                unavailable(ctx, result.cause());
            } else if (result.result() != null) {
                ctx.fail(new ApiError(ApiError.NOT_FOUND, result.result()));
            } else {
                send(ctx, 200, Map.of("calibration", calibration()));
            }
        });
    }

    /** Each group's factors and the runs behind them. */
    private List<Map<String, Object>> calibration() {
        List<Map<String, Object>> list = new ArrayList<>();
        for (CalibrationFactors f : predictor.factors()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("gpu", f.gpuId());
            entry.put("family", f.family());
            entry.put("applied", f.applied());
            entry.put("step_time_factor", f.stepTimeFactor());
            entry.put("memory_factor", f.memoryFactor());
            entry.put("runs", f.runs());
            entry.put("used_runs", f.usedRuns());
            entry.put("outlier_runs", f.outlierRuns());
            entry.put("excluded_runs", f.excludedRuns());
            entry.put("min_runs", Calibrator.MIN_RUNS);
            list.add(entry);
        }
        return list;
    }

    private void history(RoutingContext ctx) {
        int limit;
        try {
            String raw = ctx.request().getParam("limit");
            limit = raw == null ? DEFAULT_LIMIT : Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            limit = -1;
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw ApiError.unprocessable("limit must be an integer from 1 to " + MAX_LIMIT);
        }
        int n = limit;
        ctx.vertx().executeBlocking(() -> body(n)).onComplete(result -> {
            if (result.succeeded()) {
                send(ctx, 200, result.result());
            } else {
                unavailable(ctx, result.cause());
            }
        });
    }

    private static void unavailable(RoutingContext ctx, Throwable cause) {
        String message = cause.getMessage();
        send(ctx, 500, Map.of("error", message == null ? "history unavailable"
                : message.lines().findFirst().orElse(message)));
    }

    private Map<String, Object> body(int limit) throws Exception {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("persistent", store.isPresent());
        List<Map<String, Object>> runs = new ArrayList<>();
        List<Map<String, Object>> alerts = new ArrayList<>();
        if (store.isPresent()) {
            for (StoredRun run : store.get().runs(limit)) {
                runs.add(runEntry(run));
            }
            for (StoredAnomaly anomaly : store.get().anomalies(null, limit)) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("run_id", anomaly.runId());
                entry.put("kind", anomaly.kind());
                entry.put("severity", anomaly.severity());
                entry.put("since", anomaly.since().toEpochMilli() / 1000.0);
                entry.put("resolved_at", anomaly.resolved() == null ? null : anomaly.resolved().toEpochMilli() / 1000.0);
                entry.put("message", anomaly.message());
                entry.put("suggestion", anomaly.suggestion());
                entry.put("evidence", anomaly.evidenceJson() == null ? null : Json.MAPPER.readTree(anomaly.evidenceJson()));
                alerts.add(entry);
            }
        }
        body.put("runs", runs);
        body.put("alerts", alerts);
        body.put("calibration", calibration());
        return body;
    }

    private static Map<String, Object> runEntry(StoredRun run) throws Exception {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("run_id", run.runId());
        entry.put("first_seen", run.firstSeen().toEpochMilli() / 1000.0);
        entry.put("last_seen", run.lastSeen().toEpochMilli() / 1000.0);
        entry.put("ended_at", run.ended() == null ? null : run.ended().toEpochMilli() / 1000.0);
        JsonNode summary = run.summaryJson() == null ? null : Json.MAPPER.readTree(run.summaryJson());
        entry.put("spec", run.specJson() == null ? null : Json.MAPPER.readTree(run.specJson()));
        if (summary != null) {
            entry.put("synthetic", summary.path("synthetic").asBoolean(false));
            entry.put("last_step", number(summary, "last_step"));
            entry.put("step_seconds", number(summary, "step_seconds"));
            entry.put("predicted_step_seconds", number(summary, "predicted_step_seconds"));
            entry.put("peak_memory_bytes", number(summary, "peak_memory_bytes"));
            entry.put("predicted_peak_memory_bytes", number(summary, "predicted_peak_memory_bytes"));
            entry.put("step_time_error_ratio", ratio(summary, "step_seconds", "predicted_step_seconds"));
            entry.put("memory_error_ratio", ratio(summary, "peak_memory_bytes", "predicted_peak_memory_bytes"));
        }
        return entry;
    }

    private static Double number(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || !value.isNumber() ? null : value.asDouble();
    }

    /** observed / predicted, or null when either is missing. */
    private static Double ratio(JsonNode node, String observed, String predicted) {
        Double o = number(node, observed);
        Double p = number(node, predicted);
        return o == null || p == null || p <= 0 ? null : o / p;
    }

    private static void send(RoutingContext ctx, int status, Object body) {
        ApiVerticle.send(ctx.response(), status, body);
    }
}
