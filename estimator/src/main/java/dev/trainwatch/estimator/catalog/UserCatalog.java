package dev.trainwatch.estimator.catalog;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.trainwatch.protocol.Errors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads one user catalog file into the lists of a catalog being built, checking each entry. Stateless. */
final class UserCatalog {

    private static final Set<String> SECTIONS = Set.of("gpus", "models", "encoders", "_comment");
    /** Architectures a user entry may name, sorted as its error lists them. */
    private static final List<String> GPU_ARCHITECTURES = List.of("ada", "ampere", "blackwell", "hopper", "turing", "volta");
    private static final List<String> MODEL_ARCHITECTURES = List.of("cogvideox", "dit", "ltx", "mmdit", "pixart",
            "sana", "sd3", "stdit", "stdit3", "wan", "zimage");
    private static final Pattern ID = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");

    private UserCatalog() {
    }

    static void read(Path file, ObjectMapper lenient, List<ModelInfo> models, List<GpuInfo> gpus,
            List<EncoderInfo> encoders, Map<String, String> origins) {
        String origin = file.toString();
        ObjectMapper mapper = lenient.copy().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        JsonNode root;
        try {
            root = mapper.readTree(Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            throw new CatalogException("catalog " + file + ": no such file");
        } catch (JsonProcessingException e) {
            throw new CatalogException("catalog " + file + ": not valid JSON at line "
                    + (e.getLocation() == null ? 0 : e.getLocation().getLineNr()) + ": " + plain(e));
        } catch (IOException | UncheckedIOException e) {
            throw new CatalogException("catalog " + file + ": cannot read: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new CatalogException("catalog " + file + ": expected a JSON object with \"gpus\", \"models\" or \"encoders\" lists");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!SECTIONS.contains(field)) {
                throw new CatalogException("catalog " + file + ": unknown section '" + field + "' (expected gpus, models, encoders)");
            }
        }
        // Encoders first: a user model may name a user encoder.
        for (EncoderInfo e : entries(mapper, file, root, "encoders", EncoderInfo.class)) {
            checkEncoder(file, e);
            if (encoders.stream().anyMatch(other -> other.id().equals(e.id()))) {
                throw duplicate(file, "encoder", e.id(), "encoder " + e.id() + " (" + origins.get("encoder:" + e.id()) + ")");
            }
            encoders.add(e);
            origins.put("encoder:" + e.id(), origin);
        }
        for (GpuInfo gpu : entries(mapper, file, root, "gpus", GpuInfo.class)) {
            checkGpu(file, gpu);
            for (String name : gpu.names()) {
                for (GpuInfo other : gpus) {
                    if (other.names().stream().map(Catalog::normalize).anyMatch(Catalog.normalize(name)::equals)) {
                        throw duplicate(file, "GPU", gpu.id() + (name.equals(gpu.id()) ? "" : " (name '" + name + "')"),
                                "GPU " + other.id() + " (" + origins.get("gpu:" + other.id()) + ")");
                    }
                }
            }
            gpus.add(gpu);
            origins.put("gpu:" + gpu.id(), origin);
        }
        for (ModelInfo model : entries(mapper, file, root, "models", ModelInfo.class)) {
            checkModel(file, model, encoders);
            if (models.stream().anyMatch(other -> other.id().equals(model.id()))) {
                throw duplicate(file, "model", model.id(), "model " + model.id() + " (" + origins.get("model:" + model.id()) + ")");
            }
            models.add(model);
            origins.put("model:" + model.id(), origin);
        }
    }

    private static <T> List<T> entries(ObjectMapper mapper, Path file, JsonNode root, String section, Class<T> type) {
        JsonNode list = root.get(section);
        if (list == null || list.isNull()) {
            return List.of();
        }
        if (!list.isArray()) {
            throw new CatalogException("catalog " + file + ": \"" + section + "\" should be a list");
        }
        List<T> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode node = list.get(i);
            String where = section + "[" + i + "]" + (node.hasNonNull("id") ? " (" + node.get("id").asText() + ")" : "");
            try {
                out.add(mapper.treeToValue(node, type));
            } catch (JsonProcessingException | IllegalArgumentException e) {
                String why = e instanceof JsonProcessingException j ? plain(j) : firstLine(e.getMessage());
                throw new CatalogException("catalog " + file + ": " + where + ": " + why);
            }
        }
        return out;
    }

    private static void checkGpu(Path file, GpuInfo g) {
        String where = "catalog " + file + ": GPU " + g.id() + ": ";
        requireId(file, "gpus", g.id());
        if (g.architecture() == null || !GPU_ARCHITECTURES.contains(g.architecture())) {
            throw new CatalogException(where + "architecture should be one of " + String.join(", ", GPU_ARCHITECTURES)
                    + ", got " + g.architecture());
        }
        positive(where, "memory_bytes", g.memoryBytes());
        positive(where, "bandwidth_gbps", g.bandwidthGbps());
        positive(where, "fp16_tflops", g.fp16Tflops());
        positive(where, "fp32_tflops", g.fp32Tflops());
        positive(where, "allreduce_gbps", g.allreduceGbps());
        if (g.bf16Tflops() != null) {
            positive(where, "bf16_tflops", g.bf16Tflops());
        }
        if (g.tf32Tflops() != null) {
            positive(where, "tf32_tflops", g.tf32Tflops());
        }
        if (g.sms() < 0 || g.sms() > 10_000) {
            throw new CatalogException(where + "sms is the number of streaming multiprocessors (e.g. 132), got " + g.sms());
        }
        if (g.nvlinkGbps() != null) {
            positive(where, "nvlink_gbps", g.nvlinkGbps());
        }
        if (g.efficiency() != 0 && !(g.efficiency() > 0 && g.efficiency() <= 1)) {
            throw new CatalogException(where + "efficiency is the share of the peak GEMMs reach, between 0 and 1"
                    + " (leave it out for the architecture's); got " + g.efficiency());
        }
    }

    private static void checkModel(Path file, ModelInfo m, List<EncoderInfo> encoders) {
        requireId(file, "models", m.id());
        String where = "catalog " + file + ": model " + m.id() + ": ";
        if (m.architecture() == null || !MODEL_ARCHITECTURES.contains(m.architecture())) {
            throw new CatalogException(where + "architecture should be one of " + String.join(", ", MODEL_ARCHITECTURES)
                    + ", got " + m.architecture());
        }
        if (m.family() == null || m.family().isBlank()) {
            throw new CatalogException(where + "family is missing (dit, pixart, sana, opensora or your own)");
        }
        positive(where, "depth", m.depth());
        positive(where, "hidden", m.hidden());
        positive(where, "heads", m.heads());
        positive(where, "patch", m.patch());
        positive(where, "mlp_ratio", m.mlpRatio() > 0 || m.ffnHidden() > 0 ? 1 : 0);
        positive(where, "latent_channels", m.latentChannels());
        positive(where, "latent_downsample", m.latentDownsample());
        if (m.architecture().equals("mmdit") && m.singleDepth() < 0) {
            // 0 is an MMDiT of joint (double-stream) blocks only, as Stable Diffusion 3's.
            throw new CatalogException(where + "single_depth must be 0 or more, got " + m.singleDepth());
        }
        if (m.architecture().equals("sana")) {
            positive(where, "head_dim", m.headDim());
            positive(where, "ffn_hidden", m.ffnHidden());
        }
        if (m.hidden() % m.heads() != 0) {
            throw new CatalogException(where + "hidden " + m.hidden() + " is not divisible by heads " + m.heads());
        }
        for (String encoder : m.textEncoder() == null ? List.of(m.vae()) : List.of(m.vae(), m.textEncoder())) {
            if (encoder == null || encoders.stream().noneMatch(e -> e.id().equals(encoder))) {
                throw new CatalogException(where + "encoder " + encoder + " is not in the catalog; known: "
                        + String.join(", ", encoders.stream().map(EncoderInfo::id).toList()));
            }
        }
        if (m.textEncoder() != null) {
            positive(where, "text_tokens", m.textTokens());
            positive(where, "caption_channels", m.captionChannels());
        }
    }

    private static void checkEncoder(Path file, EncoderInfo e) {
        requireId(file, "encoders", e.id());
        String where = "catalog " + file + ": encoder " + e.id() + ": ";
        if (!"text".equals(e.kind()) && !"vae".equals(e.kind())) {
            throw new CatalogException(where + "kind should be text or vae, got " + e.kind());
        }
        positive(where, "params", e.params());
        if (e.kind().equals("vae")) {
            positive(where, "downsample", e.downsample());
            positive(where, "encoder_macs_per_pixel", e.encoderMacsPerPixel());
        }
    }

    private static void requireId(Path file, String section, String id) {
        if (id == null || !ID.matcher(id).matches()) {
            throw new CatalogException("catalog " + file + ": " + section + ": id " + (id == null ? "is missing"
                    : "'" + id + "' should be lower-case letters, digits, '.', '_' or '-'"));
        }
    }

    private static void positive(String where, String field, double value) {
        if (!(value > 0) || !Double.isFinite(value)) {
            throw new CatalogException(where + field + " should be above 0, got " + (value == (long) value
                    ? String.valueOf((long) value) : String.valueOf(value)));
        }
    }

    private static CatalogException duplicate(Path file, String kind, String what, String other) {
        return new CatalogException("catalog " + file + ": " + kind + " " + what + " is already taken by " + other
                + "; give it another id or name (entries are never overwritten)");
    }

    private static final Pattern MISMATCH = Pattern.compile("Cannot deserialize value of type `([^`]+)` from (.*?)"
            + "(?:: .*)?$");

    /**
     * Jackson's message in a user's words: the field named, the expected kind of value said plainly, and none of its
     * internals (Java types, "(code 44)", "[Source: …]" locations).
     */
    static String plain(JsonProcessingException e) {
        String message = firstLine(e.getOriginalMessage());
        String field = null;
        if (e instanceof JsonMappingException m && !m.getPath().isEmpty()) {
            StringBuilder path = new StringBuilder();
            for (JsonMappingException.Reference r : m.getPath()) {
                if (r.getFieldName() != null) {
                    path.append(path.length() == 0 ? "" : ".").append(r.getFieldName());
                } else if (r.getIndex() >= 0) {
                    path.append('[').append(r.getIndex()).append(']');
                }
            }
            field = path.length() == 0 ? null : path.toString();
        }
        Matcher mismatch = MISMATCH.matcher(message);
        if (mismatch.find()) {
            message = (field != null ? "'" + field + "' " : "a value ") + "should be " + kind(mismatch.group(1))
                    + ", not " + given(mismatch.group(2));
        } else if (field != null && !message.contains(field)) {
            message = "'" + field + "': " + message;
        }
        message = message.replaceAll("\\s*\\(start marker at \\[Source:[^\\]]*line: (\\d+), column: \\d+\\]\\)",
                        " opened at line $1")
                .replaceAll("\\s*\\[Source:[^\\]]*\\]", "")
                .replaceAll("\\s*\\(code -?\\d+\\)", "")
                .replaceAll("\\s*\\(class [\\w.$]+\\)", "")
                .replaceAll("\\s*\\(for Object starting at[^)]*\\)", "")
                .replace("`", "'");
        return message.strip();
    }

    /** What Jackson says it found ("String \"deep\"", "Array value (token `JsonToken.START_ARRAY`)") in JSON terms. */
    private static String given(String from) {
        if (from.startsWith("String ")) {
            return from.substring("String ".length()).strip();
        }
        for (String[] kind : new String[][] {{"Array value", "a list"}, {"Object value", "an object"},
                {"Boolean value", "true or false"}, {"Floating-point value", "a decimal number"},
                {"Integer value", "a whole number"}}) {
            if (from.startsWith(kind[0])) {
                return kind[1];
            }
        }
        return from.replaceAll("\\s*\\(token[^)]*\\)", "").strip();
    }

    /** A Java type as the kind of JSON value it reads. */
    private static String kind(String javaType) {
        String t = javaType.substring(javaType.lastIndexOf('.') + 1);
        return switch (t) {
            case "int", "long", "short", "Integer", "Long", "Short" -> "a whole number";
            case "double", "float", "Double", "Float", "BigDecimal" -> "a number";
            case "boolean", "Boolean" -> "true or false";
            case "String" -> "a string";
            default -> t.startsWith("List") || t.startsWith("Set") || javaType.startsWith("java.util.") ? "a list"
                    : "an object";
        };
    }

    private static String firstLine(String message) {
        String line = Errors.firstLine(message, "invalid");
        return line.toLowerCase(Locale.ROOT).startsWith("unrecognized field") ? line.replaceAll("\\s*\\(class.*$", "") : line;
    }
}
