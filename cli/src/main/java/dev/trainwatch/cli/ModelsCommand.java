package dev.trainwatch.cli;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.Json;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;

/** {@code trainwatch models}: the model catalog with parameter counts derived from each architecture. */
@Command(name = "models", mixinStandardHelpOptions = true,
        description = "List the models the estimator knows, with parameters derived from their architecture.")
final class ModelsCommand extends CatalogListing {

    @Override
    List<Map<String, Object>> rows(Estimator estimator) {
        return estimator.catalog().models().stream().map(m -> jsonRow(estimator, m)).toList();
    }

    @Override
    void table(Estimator estimator, PrintWriter out) {
        out.printf(Locale.ROOT, "%-18s %-26s %-9s %15s  %-18s %-28s %-30s %s%n", "ID", "NAME", "FAMILY", "PARAMS",
                "PUBLISHED", "SHAPE (depth x hidden, /patch)", "ENCODERS", "ORIGIN");
        for (ModelInfo m : estimator.catalog().models()) {
            String shape = m.singleDepth() > 0
                    ? m.depth() + "+" + m.singleDepth() + " x " + m.hidden() + ", /" + m.patch()
                    : m.depth() + " x " + m.hidden() + ", /" + m.patch();
            String encoders = (m.textEncoder() == null ? "" : m.textEncoder() + " + ") + m.vae();
            out.printf(Locale.ROOT, "%-18s %-26s %-9s %,15d  %-18s %-28s %-30s %s%n", m.id(), m.name(), m.family(),
                    estimator.params(m.id()), m.publishedText(), shape, encoders,
                    estimator.catalog().origin("model", m.id()));
        }
    }

    static final TypeReference<LinkedHashMap<String, Object>> ROW = new TypeReference<>() { };

    /** A model's JSON row, in this order. */
    private static final List<String> KEYS = List.of("id", "name", "family", "params", "published_params",
            "published_as", "depth", "hidden", "patch", "latent_downsample", "text_encoder", "vae", "defaults", "origin",
            "architecture", "single_depth", "heads", "head_dim", "patch_t", "mlp_ratio", "ffn_hidden", "latent_channels",
            "temporal_downsample", "learn_sigma", "num_classes", "text_tokens", "caption_channels", "vector_channels",
            "attention_upcast", "size_embedders", "video");

    /** One model as JSON with its whole architecture, the one source bench/gpu/probe.py builds models from. */
    private static Map<String, Object> jsonRow(Estimator estimator, ModelInfo m) {
        Map<String, Object> fields = Json.MAPPER.convertValue(m, ROW);
        fields.put("params", estimator.params(m.id()));
        fields.put("published_as", m.publishedText());
        fields.put("origin", estimator.catalog().origin("model", m.id()));
        Map<String, Object> row = new LinkedHashMap<>();
        KEYS.forEach(key -> row.put(key, fields.get(key)));
        return row;
    }
}
