package dev.trainwatch.cli;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.io.PrintWriter;
import java.util.ArrayList;
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
        List<Map<String, Object>> rows = new ArrayList<>();
        for (ModelInfo m : estimator.models()) {
            rows.add(jsonRow(estimator, m));
        }
        return rows;
    }

    @Override
    void table(Estimator estimator, PrintWriter out) {
        out.printf(Locale.ROOT, "%-18s %-26s %-9s %15s  %-18s %-28s %-30s %s%n", "ID", "NAME", "FAMILY", "PARAMS",
                "PUBLISHED", "SHAPE (depth x hidden, /patch)", "ENCODERS", "ORIGIN");
        for (ModelInfo m : estimator.models()) {
            String shape = m.singleDepth() > 0
                    ? m.depth() + "+" + m.singleDepth() + " x " + m.hidden() + ", /" + m.patch()
                    : m.depth() + " x " + m.hidden() + ", /" + m.patch();
            String encoders = (m.textEncoder() == null ? "" : m.textEncoder() + " + ") + m.vae();
            out.printf(Locale.ROOT, "%-18s %-26s %-9s %,15d  %-18s %-28s %-30s %s%n", m.id(), m.name(), m.family(),
                    estimator.params(m.id()), m.publishedText(), shape, encoders,
                    estimator.catalog().origin("model", m.id()));
        }
    }

    /** One model as JSON with its whole architecture, the one source bench/gpu/probe.py builds models from. */
    private static Map<String, Object> jsonRow(Estimator estimator, ModelInfo m) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", m.id());
        row.put("name", m.name());
        row.put("family", m.family());
        row.put("params", estimator.params(m.id()));
        row.put("published_params", m.publishedParams());
        row.put("published_as", m.publishedText());
        row.put("depth", m.depth());
        row.put("hidden", m.hidden());
        row.put("patch", m.patch());
        row.put("latent_downsample", m.latentDownsample());
        row.put("text_encoder", m.textEncoder());
        row.put("vae", m.vae());
        row.put("defaults", m.defaults());
        row.put("origin", estimator.catalog().origin("model", m.id()));
        row.put("architecture", m.architecture());
        row.put("single_depth", m.singleDepth());
        row.put("heads", m.heads());
        row.put("head_dim", m.headDim());
        row.put("patch_t", m.patchT());
        row.put("mlp_ratio", m.mlpRatio());
        row.put("ffn_hidden", m.ffnHidden());
        row.put("latent_channels", m.latentChannels());
        row.put("temporal_downsample", m.temporalDownsample());
        row.put("learn_sigma", m.learnSigma());
        row.put("num_classes", m.numClasses());
        row.put("text_tokens", m.textTokens());
        row.put("caption_channels", m.captionChannels());
        row.put("vector_channels", m.vectorChannels());
        row.put("attention_upcast", m.attentionUpcast());
        row.put("size_embedders", m.sizeEmbedders());
        row.put("video", m.video());
        return row;
    }
}
