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
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.Json;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.ArrayList;
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

    /** One group's factors and the runs behind them. */
    record CalibrationView(String gpu, String family, boolean applied, double stepTimeFactor, double memoryFactor,
                           int runs, List<String> usedRuns, List<String> outlierRuns, List<String> excludedRuns,
                           int minRuns) {
        static CalibrationView of(CalibrationFactors f) {
            return new CalibrationView(f.gpuId(), f.family(), f.applied(), f.stepTimeFactor(), f.memoryFactor(),
                    f.runs(), f.usedRuns(), f.outlierRuns(), f.excludedRuns(), Calibrator.MIN_RUNS);
        }
    }

    private List<CalibrationView> calibration() {
        return predictor.factors().stream().map(CalibrationView::of).toList();
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
        send(ctx, 500, Map.of("error", Errors.firstLine(cause.getMessage(), "history unavailable")));
    }

    record History(boolean persistent, List<RunEntry> runs, List<AlertEntry> alerts,
                   List<CalibrationView> calibration) {
    }

    private History body(int limit) throws Exception {
        List<RunEntry> runs = new ArrayList<>();
        List<AlertEntry> alerts = new ArrayList<>();
        if (store.isPresent()) {
            for (StoredRun run : store.get().runs(limit)) {
                runs.add(runEntry(run));
            }
            for (StoredAnomaly a : store.get().anomalies(null, limit)) {
                alerts.add(new AlertEntry(a.runId(), a.kind(), a.severity(), a.since().toEpochMilli() / 1000.0,
                        a.resolved() == null ? null : a.resolved().toEpochMilli() / 1000.0, a.message(), a.suggestion(),
                        a.evidenceJson() == null ? null : Json.MAPPER.readTree(a.evidenceJson())));
            }
        }
        return new History(store.isPresent(), runs, alerts, calibration());
    }

    record AlertEntry(String runId, String kind, String severity, double since, Double resolvedAt, String message,
                      String suggestion, JsonNode evidence) {
    }

    /** A past run; the fields from {@code synthetic} on come from its stored summary (null: left out). */
    record RunEntry(String runId, double firstSeen, double lastSeen, Double endedAt, JsonNode spec, Boolean synthetic,
                    Double lastStep, Double stepSeconds, Double predictedStepSeconds, Double peakMemoryBytes,
                    Double predictedPeakMemoryBytes, Double stepTimeErrorRatio, Double memoryErrorRatio) {
    }

    private static RunEntry runEntry(StoredRun run) throws Exception {
        JsonNode s = run.summaryJson() == null ? Json.MAPPER.missingNode() : Json.MAPPER.readTree(run.summaryJson());
        return new RunEntry(run.runId(), run.firstSeen().toEpochMilli() / 1000.0,
                run.lastSeen().toEpochMilli() / 1000.0, run.ended() == null ? null : run.ended().toEpochMilli() / 1000.0,
                run.specJson() == null ? null : Json.MAPPER.readTree(run.specJson()),
                s.isMissingNode() ? null : s.path("synthetic").asBoolean(false), number(s, "last_step"),
                number(s, "step_seconds"), number(s, "predicted_step_seconds"), number(s, "peak_memory_bytes"),
                number(s, "predicted_peak_memory_bytes"), ratio(s, "step_seconds", "predicted_step_seconds"),
                ratio(s, "peak_memory_bytes", "predicted_peak_memory_bytes"));
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
