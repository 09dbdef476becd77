package dev.trainwatch.collector.http;

import dev.trainwatch.collector.ingest.ApiError;
import dev.trainwatch.collector.ingest.BodyDecoder;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.commonmark.Extension;
import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.ext.heading.anchor.HeadingAnchorExtension;
import org.commonmark.parser.Parser;
import org.commonmark.renderer.html.HtmlRenderer;

/**
 * {@code GET /docs/<NAME>.md}: the documentation shipped in the jar, rendered to HTML with an id on every heading, so
 * an alert's runbook link opens at its section on any collector. Only bundled files are served; pages are cached.
 */
final class DocsRoute {
    private static final Pattern NAME = Pattern.compile("[A-Z][A-Z0-9_-]{0,40}\\.md");
    private static final List<Extension> EXTENSIONS = List.of(HeadingAnchorExtension.create(), TablesExtension.create());
    private static final Parser PARSER = Parser.builder().extensions(EXTENSIONS).build();
    private static final HtmlRenderer RENDERER = HtmlRenderer.builder().extensions(EXTENSIONS).escapeHtml(true).build();

    private final Map<String, byte[]> rendered = new ConcurrentHashMap<>();

    void handle(RoutingContext ctx) {
        String name = ctx.pathParam("name");
        byte[] page = name != null && NAME.matcher(name).matches() ? rendered.computeIfAbsent(name, DocsRoute::render)
                : null;
        if (page == null) {
            throw new ApiError(ApiError.NOT_FOUND, "no such document: " + BodyDecoder.printable(String.valueOf(name), 64)
                    + " (the docs are ALERTS.md, API.md, METRICS.md, DEPLOY.md, …)");
        }
        ctx.response().setStatusCode(200).putHeader(HttpHeaders.CONTENT_TYPE, "text/html; charset=utf-8")
                .end(Buffer.buffer(page));
    }

    /** The page, or null when no such document is bundled. */
    private static byte[] render(String name) {
        try (InputStream in = DocsRoute.class.getClassLoader().getResourceAsStream("docs/" + name)) {
            if (in == null) {
                return null;
            }
            String markdown = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            String title = name.substring(0, name.length() - 3);
            String html = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>trainwatch — " + title
                    + "</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;"
                    + "padding:0 1em}code,pre{background:#f4f4f4}pre{padding:.6em;overflow:auto}table{border-collapse:"
                    + "collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>"
                    + RENDERER.render(PARSER.parse(markdown)) + "</body></html>";
            return html.getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the bundled docs/" + name, e);
        }
    }
}
