package dev.trainwatch.collector.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.http.tls.PeerNames;
import dev.trainwatch.collector.http.tls.ServerTls;
import dev.trainwatch.collector.ingest.ApiError;
import dev.trainwatch.collector.ingest.BodyDecoder;
import dev.trainwatch.collector.ingest.IngestService;
import dev.trainwatch.collector.ingest.InputValidator;
import dev.trainwatch.collector.metrics.MetricsExporter;
import dev.trainwatch.collector.series.SeriesBuilder;
import dev.trainwatch.collector.series.SeriesRequest;
import dev.trainwatch.collector.state.Fleet;
import dev.trainwatch.collector.state.LimitReachedException;
import dev.trainwatch.collector.state.Slots;
import dev.trainwatch.collector.state.view.RunView;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.estimator.plan.RunPlans;
import dev.trainwatch.protocol.Errors;
import dev.trainwatch.protocol.Json;
import dev.trainwatch.protocol.wire.Gzip;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.HttpException;
import io.vertx.ext.web.handler.PlatformHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The collector's HTTP edge: the {@code /v1} API, {@code /metrics}, {@code /healthz} and the web page (routes in
 * {@link #router()}). Handlers read the request's framing, call plain Java ({@link IngestService}, the {@link Fleet},
 * the {@link MetricsExporter}) off the event loop and answer; every refusal is {@code {"error": "…"}} in one line.
 */
public final class ApiVerticle extends VerticleBase {

    private static final System.Logger LOG = System.getLogger(ApiVerticle.class.getName());
    private static final String JSON = "application/json";
    private static final String DUPLICATE = "trainwatch.duplicate";
    private static final String TOKEN_NODE = "trainwatch.tokenNode";

    /** Largest request line and header block: an agent sends a few hundred bytes of each. */
    static final int MAX_INITIAL_LINE = 4_096;
    static final int MAX_HEADER_SIZE = 16_384;
    /** Series builds at once (each holds a copy of a run's windows and a core up to a second); more get 503. */
    static final int MAX_SERIES_BUILDS = 2;
    static final int SERIES_RETRY_AFTER_SECONDS = 1;
    static final String SERIES_BUSY = "too many series requests in progress (at most " + MAX_SERIES_BUILDS
            + " at once); retry after " + SERIES_RETRY_AFTER_SECONDS + " s";

    private final CollectorConfig config;
    private final Fleet fleet;
    private final MetricsExporter metrics;
    private final List<Consumer<Router>> extraRoutes;
    private final BearerAuth auth;
    private final IngestService ingest;
    private HttpServer server;
    /** Where every request that touches the fleet runs; the event loop only routes, checks headers and answers. */
    private WorkerExecutor fleetWorkers;
    static final int FLEET_WORKERS = 4;
    private final AtomicInteger seriesBuilds = new AtomicInteger();
    private final ServerTls tls; // null: plain HTTP
    /** Runs on the worker before each series build; a test sets it to hold builds in progress. */
    volatile Runnable beforeSeriesBuild = () -> {
    };

    /**
     * @param extraRoutes called with the router after the API routes are in place (history, alerts)
     * @param durability waits (bounded) until what listeners were told is on disk, so an acknowledged spec lasts
     * @param auth checks the bearer token of writes
     * @param tls serves over TLS, or null for plain HTTP
     */
    public ApiVerticle(CollectorConfig config, Fleet fleet, MetricsExporter metrics,
                       List<Consumer<Router>> extraRoutes,
                       Function<Duration, Boolean> durability, BearerAuth auth, ServerTls tls) {
        this.config = config;
        this.fleet = fleet;
        this.metrics = metrics;
        this.extraRoutes = List.copyOf(extraRoutes);
        this.auth = auth;
        this.tls = tls;
        this.ingest = new IngestService(config.limits(), fleet, durability);
    }

    @Override
    public Future<?> start() {
        HttpServerOptions options = new HttpServerOptions()
                .setHost(config.host())
                .setPort(config.port())
                .setMaxInitialLineLength(MAX_INITIAL_LINE)
                .setMaxHeaderSize(MAX_HEADER_SIZE)
                // Bodies are inflated by BodyDecoder under a cap; Netty's decompressor would inflate unbounded.
                .setDecompressionSupported(false)
                .setCompressionSupported(true)
                // No WebSockets: Netty then leaves the upgrade handler out of the pipeline.
                .setPerFrameWebSocketCompressionSupported(false)
                .setPerMessageWebSocketCompressionSupported(false)
                .setIdleTimeout(120);
        if (tls != null) {
            tls.applyTo(options);
        }
        fleetWorkers = vertx.createSharedWorkerExecutor("trainwatch-fleet", FLEET_WORKERS);
        server = vertx.createHttpServer(options).requestHandler(router()).invalidRequestHandler(this::invalidRequest);
        Future<?> listening = server.listen();
        if (tls != null) {
            listening = listening.onSuccess(s -> tls.watch(vertx, server));
        }
        return listening;
    }

    @Override
    public Future<?> stop() {
        if (tls != null) {
            tls.stop(vertx);
        }
        Future<?> closed = server == null ? Future.succeededFuture() : server.close();
        return closed.eventually(() -> fleetWorkers == null ? Future.succeededFuture() : fleetWorkers.close());
    }

    /** The port actually bound (useful with port 0). */
    public int actualPort() {
        return server.actualPort();
    }

    /** A request the HTTP codec could not parse gets the JSON error shape, then the connection is closed. */
    private void invalidRequest(HttpServerRequest request) {
        Throwable cause = request.decoderResult().cause();
        int status = 400;
        String message = "malformed HTTP request";
        if (cause instanceof TooLongHttpLineException) {
            status = 414;
            message = "request line longer than " + MAX_INITIAL_LINE + " bytes";
        } else if (cause instanceof TooLongHttpHeaderException) {
            status = 431;
            message = "request headers larger than " + MAX_HEADER_SIZE + " bytes";
        }
        send(request.response().putHeader(HttpHeaders.CONNECTION, "close"), status, Map.of("error", message))
                .onComplete(v -> request.connection().close());
    }

    Router router() {
        Router router = Router.router(vertx);

        // The most frequent request first: the router tries routes in order.
        ingest(router.route(HttpMethod.POST, "/v1/samples")).handler(this::postSamples);
        ingest(router.route(HttpMethod.POST, "/v1/runs/:run_id/steps")).handler(this::postSteps);
        ingest(router.route(HttpMethod.PUT, "/v1/runs/:run_id")).handler(this::putRun);
        router.get("/v1/runs").handler(this::listRuns);
        router.get("/v1/runs/:run_id").handler(this::getRun);
        router.get("/v1/runs/:run_id/series").handler(this::getSeries);
        router.get("/v1/runs/:run_id/plans").handler(this::getPlans);
        router.delete("/v1/runs/:run_id").handler(this::deleteRun);
        router.get("/metrics").handler(this::scrape);
        router.get("/healthz").handler(this::health);
        StaticHandler page = StaticHandler.create("webroot").setCachingEnabled(false).setDirectoryListing(false);
        router.get("/").handler(page);
        router.get("/static/*").handler(page);
        router.get("/docs/:name").handler(new DocsRoute()::handle);

        for (Consumer<Router> extra : extraRoutes) {
            extra.accept(router);
        }

        router.route().failureHandler(this::failure);
        router.errorHandler(404, ctx -> error(ctx, ApiError.NOT_FOUND, "no such endpoint: "
                + ctx.request().method() + " " + BodyDecoder.printable(ctx.request().path(), 80)));
        router.errorHandler(405, ctx -> error(ctx, ApiError.METHOD_NOT_ALLOWED, "method "
                + ctx.request().method() + " not allowed on " + BodyDecoder.printable(ctx.request().path(), 80)));
        // A query string that does not decode ("?x=%") fails before any handler: without this, a plain-text 400.
        router.errorHandler(400, ctx -> error(ctx, ApiError.BAD_REQUEST, ctx.failure() instanceof ApiError api
                ? api.getMessage() : "malformed URL: the query string or path does not decode (check its %-escapes)"));
        router.errorHandler(500, this::failure);
        return router;
    }

    /** Before an ingest handler, cheapest first: count the outcome, check the headers, read the body under the limit. */
    private Route ingest(Route route) {
        return route
                .handler((PlatformHandler) this::countOutcome)
                .handler((PlatformHandler) this::admit)
                .handler(BodyHandler.create(false).setBodyLimit(config.limits().maxBodyBytes()));
    }

    /** Checks of the headers alone, as a platform handler so that they run before a byte of the body is read. */
    private void admit(RoutingContext ctx) {
        try {
            String node = auth.checkNode(ctx.request().getHeader(HttpHeaders.AUTHORIZATION));
            if (node != null) {
                ctx.put(TOKEN_NODE, node);
            }
            checkContentType(ctx.request().getHeader(HttpHeaders.CONTENT_TYPE));
            checkDeclaredLength(ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH));
        } catch (ApiError e) {
            ctx.fail(e);
            return;
        }
        ctx.next();
    }

    /** Refuses (415) a media type other than JSON; a missing one is taken as JSON (simple scripts omit it). */
    private static void checkContentType(String contentType) {
        if (contentType == null || contentType.isBlank()) {
            return;
        }
        String mediaType = contentType.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        if (!mediaType.equals("application/json") && !mediaType.endsWith("+json")) {
            throw new ApiError(ApiError.UNSUPPORTED_MEDIA_TYPE,
                    "Content-Type must be application/json, got '" + BodyDecoder.printable(mediaType, 60) + "'");
        }
    }

    private void checkDeclaredLength(String contentLength) {
        if (contentLength == null) {
            return;
        }
        long declared;
        try {
            declared = Long.parseLong(contentLength.strip());
        } catch (NumberFormatException e) {
            throw ApiError.badRequest("Content-Length is not a number");
        }
        if (declared > config.limits().maxBodyBytes()) {
            throw ApiError.tooLarge(tooLargeMessage());
        }
    }

    private String tooLargeMessage() {
        return "request body too large: the limit is " + config.limits().maxBodyBytes() + " bytes";
    }

    private void countOutcome(RoutingContext ctx) {
        ctx.addHeadersEndHandler(v -> {
            String outcome = outcomeOf(ctx.response().getStatusCode(), Boolean.TRUE.equals(ctx.get(DUPLICATE)));
            if (outcome != null) {
                metrics.self().ingestOutcome(outcome);
            }
        });
        ctx.next();
    }

    static String outcomeOf(int status, boolean duplicate) {
        return switch (status) {
            case 200, 201 -> duplicate ? "duplicate" : "ok";
            case 400 -> "bad_request";
            case 401, 403 -> "unauthorized"; // 403: a client certificate that names another node
            case 404 -> "not_found";
            case 413 -> "too_large";
            case 415 -> "unsupported_media_type";
            case 422 -> "unprocessable";
            case 429 -> "limited";
            default -> null;
        };
    }

    /** Runs {@code work} on the fleet's workers and answers 200 with what it returns; a failure goes to {@link #failure}. */
    private void offLoop(RoutingContext ctx, Callable<Object> work) {
        fleetWorkers.executeBlocking(() -> encode(work.call()), false).onComplete(result -> {
            if (result.failed()) {
                ctx.fail(result.cause());
            } else if (!ctx.response().ended()) {
                send(ctx.response(), 200, result.result());
            }
        });
    }

    private void putRun(RoutingContext ctx) {
        String runId = ctx.pathParam("run_id");
        byte[] raw = rawBody(ctx);
        String encoding = ctx.request().getHeader(HttpHeaders.CONTENT_ENCODING);
        offLoop(ctx, () -> ingest.putSpec(runId, raw, encoding));
    }

    private void postSteps(RoutingContext ctx) {
        String runId = ctx.pathParam("run_id");
        String agentId = ctx.request().getParam("agent_id");
        byte[] raw = rawBody(ctx);
        String encoding = ctx.request().getHeader(HttpHeaders.CONTENT_ENCODING);
        Double requestSentAt = sentAt(ctx.request().getHeader(SENT_AT));
        offLoop(ctx, () -> ingest.steps(runId, agentId, requestSentAt, raw, encoding));
    }

    private void postSamples(RoutingContext ctx) {
        byte[] raw = rawBody(ctx);
        String encoding = ctx.request().getHeader(HttpHeaders.CONTENT_ENCODING);
        Double requestSentAt = sentAt(ctx.request().getHeader(SENT_AT));
        // With mutual TLS the client certificate names the node the batch may speak for; so does a node's token.
        Set<String> certifiedNames = PeerNames.of(ctx.request().sslSession());
        String tokenNode = ctx.get(TOKEN_NODE);
        offLoop(ctx, () -> {
            IngestService.BatchAnswer answer = ingest.batch(raw, encoding, requestSentAt, host -> {
                PeerNames.check(certifiedNames, host);
                if (tokenNode != null && !tokenNode.equals(host.toLowerCase(Locale.ROOT))) {
                    throw new ApiError(ApiError.FORBIDDEN, "the token is " + tokenNode + "'s, not host '"
                            + BodyDecoder.printable(host, 64) + "': a node's token speaks only for that node");
                }
            });
            ctx.put(DUPLICATE, answer.duplicate());
            return answer;
        });
    }

    /** When the request left the agent, on the agent's clock (seconds since the epoch). */
    static final String SENT_AT = "Trainwatch-Sent-At";

    /** The {@value #SENT_AT} header as seconds, or null when absent or implausible (the batch's own is used). */
    static Double sentAt(String header) {
        if (header == null || header.isEmpty() || header.length() > 32) {
            return null;
        }
        try {
            double seconds = Double.parseDouble(header.trim());
            return Double.isFinite(seconds) && seconds > 0 && seconds < 1e11 ? seconds : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** {@code DELETE /v1/runs/{run_id}}: forgets the run (with the ingest token, like PUT). */
    private void deleteRun(RoutingContext ctx) {
        auth.check(ctx.request().getHeader(HttpHeaders.AUTHORIZATION));
        String runId = runIdOf(ctx);
        offLoop(ctx, () -> {
            if (!fleet.deleteRun(runId)) {
                throw unknownRun(runId);
            }
            return new Deleted(runId, true);
        });
    }

    record Deleted(String runId, boolean deleted) {
    }

    private void listRuns(RoutingContext ctx) {
        offLoop(ctx, () -> new RunList(fleet.runs(), fleet.limits().stream().map(LimitView::of).toList()));
    }

    /** {@code GET /v1/runs}: the runs, and each limit's use for the page's banner and users' scripts. */
    record RunList(List<RunView> runs, List<LimitView> limits) {
    }

    record LimitView(String limit, int used, int max, long refused, long forgotten, Double lastRefusedTs) {
        static LimitView of(Slots.Usage u) {
            return new LimitView(u.kind().label(), u.used(), u.limit(), u.refused(), u.forgotten(),
                    Double.isNaN(u.lastRefusedTs()) ? null : u.lastRefusedTs());
        }
    }

    private void getRun(RoutingContext ctx) {
        String runId = runIdOf(ctx);
        offLoop(ctx, () -> fleet.run(runId).orElseThrow(() -> unknownRun(runId)));
    }

    /** The run on other hardware, re-priced from what it did (docs/API.md). */
    private void getPlans(RoutingContext ctx) {
        PlanParams params = PlanParams.parse(ctx.queryParam("gpu"), ctx.queryParam("gpus"), ctx.queryParam("batch"));
        String runId = runIdOf(ctx);
        offLoop(ctx, () -> {
            try {
                return fleet.plans(runId, params.gpuIds(), params.gpus(), params.batch())
                        .orElseThrow(() -> unknownRun(runId));
            } catch (RunPlans.Refused e) {
                throw new ApiError(ApiError.CONFLICT, Errors.firstLine(e.getMessage(), "invalid"));
            } catch (InvalidSpecException e) {
                throw ApiError.badRequest(Errors.firstLine(e.getMessage(), "invalid"));
            }
        });
    }

    private void getSeries(RoutingContext ctx) {
        // Parameters first: a malformed request is 400 whether or not the run exists.
        SeriesRequest request = SeriesParams.parse(ctx.queryParam("since"), ctx.queryParam("max_points"),
                ctx.queryParam("gpus"));
        String runId = runIdOf(ctx);
        if (seriesBuilds.incrementAndGet() > MAX_SERIES_BUILDS) {
            seriesBuilds.decrementAndGet();
            send(ctx.response().putHeader(HttpHeaders.RETRY_AFTER, Integer.toString(SERIES_RETRY_AFTER_SECONDS)),
                    ApiError.SERVICE_UNAVAILABLE, Map.of("error", SERIES_BUSY));
            return;
        }
        // The fleet holds its lock only to copy the run's windows; the build and encoding run after it, off the loop.
        vertx.executeBlocking(() -> {
            beforeSeriesBuild.run();
            return SeriesBuilder.series(fleet, runId, request).map(ApiVerticle::encode);
        }, false).onComplete(result -> {
            seriesBuilds.decrementAndGet();
            if (result.failed()) {
                ctx.fail(result.cause());
            } else if (result.result().isEmpty()) {
                ctx.fail(unknownRun(runId));
            } else {
                send(ctx.response(), 200, result.result().get());
            }
        });
    }

    /** The path's run id; 404 when it cannot name a run. */
    static String runIdOf(RoutingContext ctx) {
        String runId = ctx.pathParam("run_id");
        if (!InputValidator.RUN_ID.matcher(runId).matches()) {
            throw unknownRun(runId);
        }
        return runId;
    }

    private static ApiError unknownRun(String runId) {
        return new ApiError(ApiError.NOT_FOUND, "unknown run '" + BodyDecoder.printable(runId, 128) + "'");
    }

    private void scrape(RoutingContext ctx) {
        // Rendered and gzipped off the event loop (the server's own compression would run on it).
        String accept = ctx.request().getHeader(HttpHeaders.ACCEPT);
        String acceptEncoding = ctx.request().getHeader(HttpHeaders.ACCEPT_ENCODING);
        boolean gzip = ScrapeEncoding.acceptsGzip(acceptEncoding);
        vertx.executeBlocking(() -> {
            byte[] text = metrics.scrapeBytes(accept);
            return gzip ? Gzip.fastest(text) : text;
        }, false).onComplete(result -> {
            if (result.failed()) {
                ctx.fail(result.cause());
                return;
            }
            ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, MetricsExporter.wantsOpenMetrics(accept)
                    ? MetricsExporter.OPENMETRICS : MetricsExporter.contentType());
            ctx.response().putHeader(HttpHeaders.VARY, HttpHeaders.ACCEPT_ENCODING);
            if (gzip) {
                ctx.response().putHeader(HttpHeaders.CONTENT_ENCODING, "gzip");
            } else if (acceptEncoding != null) {
                // Another coding is answered as is: "identity" makes Vert.x's compressor leave the response alone.
                ctx.response().putHeader(HttpHeaders.CONTENT_ENCODING, HttpHeaders.IDENTITY);
            }
            ctx.response().end(Buffer.buffer(result.result()));
        });
    }

    /** Answers from counters on the event loop: never waits for the fleet's lock or builds a view. */
    private void health(RoutingContext ctx) {
        Fleet.Counts counts = fleet.counts();
        List<String> refusing = fleet.refusing();
        // Still 200: a probe must not restart the collector, nor readiness take it out of service, while it refuses.
        send(ctx.response(), 200, new Health(refusing.isEmpty() ? "ok" : "refusing",
                refusing.isEmpty() ? null : refusing,
                refusing.isEmpty() ? null : "full limits (" + String.join(", ", refusing) + ") refused requests in the"
                        + " last " + (long) Fleet.REFUSING_SECONDS + " s; agents spool and retry: raise --max-"
                        + String.join(", --max-", refusing) + " (docs/DEPLOY.md, \"Sizing\")",
                counts.runs(), counts.gpus(), counts.agents(), fleet.listenerBacklog(), auth.enabled()));
    }

    /** {@code GET /healthz}; {@code refusing} and its message only while a full limit refuses (null: left out). */
    record Health(String status, List<String> refusing, String refusingMessage, int runs, int gpus, int agents,
                  long listenerBacklog, boolean tokenRequired) {
    }

    /** The request's body as read (still compressed, if it was sent so). */
    private static byte[] rawBody(RoutingContext ctx) {
        Buffer raw = ctx.body().buffer();
        return raw == null ? new byte[0] : raw.getBytes();
    }

    private void failure(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        int status;
        String message;
        if (failure instanceof ApiError api) {
            status = api.status();
            message = api.getMessage();
        } else if (failure instanceof HttpException http) {
            status = http.getStatusCode();
            message = messageFor(status);
        } else if (failure == null) {
            status = ctx.statusCode() > 0 ? ctx.statusCode() : 500;
            message = messageFor(status);
        } else if (failure instanceof LimitReachedException full) {
            if (!ctx.response().ended() && !ctx.response().headWritten()) {
                send(ctx.response().putHeader(HttpHeaders.RETRY_AFTER, Long.toString(full.retryAfterSeconds())),
                        ApiError.TOO_MANY_REQUESTS, Map.of("error", full.getMessage(), "limit", full.kind().label(),
                                "limit_value", full.limit(), "retry_after_seconds", full.retryAfterSeconds()));
            }
            return;
        } else if (failure instanceof IllegalArgumentException bad) {
            status = ApiError.UNPROCESSABLE;
            message = Errors.firstLine(bad.getMessage(), "invalid");
        } else {
            LOG.log(System.Logger.Level.ERROR, "internal error on " + ctx.request().method() + " "
                    + ctx.request().path(), failure);
            status = 500;
            message = "internal error (" + failure.getClass().getSimpleName() + "); see the collector's log";
        }
        error(ctx, status, message);
    }

    private String messageFor(int status) {
        return switch (status) {
            case 400 -> "bad request";
            case 401 -> "missing or wrong bearer token";
            case 404 -> "not found";
            case 405 -> "method not allowed";
            case 413 -> tooLargeMessage();
            case 415 -> "unsupported media type: send application/json";
            case 422 -> "values out of range";
            case 429 -> "too many requests";
            default -> "request failed with status " + status;
        };
    }

    private static void error(RoutingContext ctx, int status, String message) {
        if (ctx.response().ended() || ctx.response().headWritten()) {
            return;
        }
        // Over HTTP/1.x a body already judged too large is not read: answer and hang up (HTTP/2 discards the stream).
        boolean unreadBody = status == ApiError.TOO_LARGE && !ctx.request().isEnded()
                && ctx.request().version() != HttpVersion.HTTP_2;
        if (unreadBody) {
            ctx.response().putHeader(HttpHeaders.CONNECTION, "close");
        }
        Future<Void> sent = send(ctx.response(), status, Map.of("error", message == null ? "error" : message));
        if (unreadBody) {
            sent.onComplete(v -> ctx.request().connection().close());
        }
    }

    /** Answers {@code status} with {@code body} as JSON ({@code byte[]}: already encoded). */
    static Future<Void> send(HttpServerResponse response, int status, Object body) {
        return response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, JSON)
                .end(Buffer.buffer(body instanceof byte[] bytes ? bytes : encode(body)));
    }

    private static byte[] encode(Object body) {
        try {
            return Json.MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode a response", e);
        }
    }

}
