package dev.trainwatch.estimator.catalog;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.type.CollectionType;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The model, GPU and encoder catalogs: the bundled JSON resources, plus any user catalog files (same format, one
 * file may hold {@code gpus}, {@code models} and {@code encoders}) read at start. Every entry remembers where it came
 * from ({@link #origin}). Immutable and thread-safe.
 */
public final class Catalog {

    /** The origin of the entries shipped with trainwatch. */
    public static final String BUNDLED = "bundled";

    private final Map<String, ModelInfo> models;
    private final Map<String, GpuInfo> gpus;
    private final Map<String, EncoderInfo> encoders;
    /** Lower-cased model id or alias to model id. */
    private final Map<String, String> modelNames;
    /** Lower-cased GPU id, alias or NVML name to GPU id. */
    private final Map<String, String> gpuNames;
    /** "gpu:id", "model:id", "encoder:id" to {@link #BUNDLED} or the file the entry was read from. */
    private final Map<String, String> origins;
    /** GEMM tiles and warp-MMA share per GPU architecture. */
    private final Map<String, ArchitectureInfo> architectures;

    private Catalog(List<ModelInfo> models, List<GpuInfo> gpus, List<EncoderInfo> encoders, Map<String, String> origins,
            Map<String, ArchitectureInfo> architectures) {
        this.origins = Map.copyOf(origins);
        this.architectures = Map.copyOf(architectures);
        for (GpuInfo gpu : gpus) {
            if (!this.architectures.containsKey(gpu.architecture())) {
                throw new CatalogException("GPU " + gpu.id() + " (" + origins.get("gpu:" + gpu.id()) + ") has architecture "
                        + gpu.architecture() + ", which the catalog does not know; known: " + String.join(", ",
                        this.architectures.keySet().stream().sorted().toList()));
            }
        }
        this.models = index(models, ModelInfo::id, "model", origins);
        this.gpus = index(gpus, GpuInfo::id, "gpu", origins);
        this.encoders = index(encoders, EncoderInfo::id, "encoder", origins);
        this.gpuNames = names(new LinkedHashMap<>(), gpus, GpuInfo::id, GpuInfo::names, Catalog::normalize, "gpu",
                "GPU name", origins);
        Map<String, String> modelIds = new LinkedHashMap<>();
        models.forEach(model -> modelIds.put(model.id().toLowerCase(Locale.ROOT), model.id()));
        this.modelNames = names(modelIds, models, ModelInfo::id, ModelInfo::aliases,
                alias -> alias.strip().toLowerCase(Locale.ROOT), "model", "model alias", origins);
        for (ModelInfo model : models) {
            requireEncoder(model, model.vae());
            if (model.textEncoder() != null) {
                requireEncoder(model, model.textEncoder());
            }
        }
    }

    /** {@code names} plus each entry's names by their key; a key two entries share is an error naming both. */
    private static <T> Map<String, String> names(Map<String, String> names, List<T> entries, Function<T, String> id,
            Function<T, List<String>> namesOf, Function<String, String> key, String kind, String what,
            Map<String, String> origins) {
        for (T entry : entries) {
            for (String name : namesOf.apply(entry)) {
                String other = names.putIfAbsent(key.apply(name), id.apply(entry));
                if (other != null && !other.equals(id.apply(entry))) {
                    throw new CatalogException(what + " '" + name + "' of " + id.apply(entry) + " (" + origins.get(
                            kind + ":" + id.apply(entry)) + ") is already used by " + other + " (" + origins.get(
                            kind + ":" + other) + ")");
                }
            }
        }
        return Collections.unmodifiableMap(names);
    }

    public static Catalog bundled() {
        ObjectMapper mapper = mapper();
        JsonNode gpuFile = resource(mapper, "gpus.json");
        List<ModelInfo> models = list(mapper, resource(mapper, "models.json"), "models", ModelInfo.class);
        List<GpuInfo> gpus = list(mapper, gpuFile, "gpus", GpuInfo.class);
        List<EncoderInfo> encoders = list(mapper, resource(mapper, "encoders.json"), "encoders", EncoderInfo.class);
        Map<String, String> origins = new LinkedHashMap<>();
        models.forEach(m -> origins.put("model:" + m.id(), BUNDLED));
        gpus.forEach(g -> origins.put("gpu:" + g.id(), BUNDLED));
        encoders.forEach(e -> origins.put("encoder:" + e.id(), BUNDLED));
        return new Catalog(models, gpus, encoders, origins, architectures(gpuFile.get("architectures")));
    }

    private static Map<String, ArchitectureInfo> architectures(JsonNode section) {
        Map<String, ArchitectureInfo> out = new LinkedHashMap<>();
        section.fields().forEachRemaining(entry -> {
            if (!entry.getKey().startsWith("_")) {
                JsonNode a = entry.getValue();
                double eager = a.has("eager_share") ? a.get("eager_share").asDouble() : 1.0;
                out.put(entry.getKey(), new ArchitectureInfo(entry.getKey(), a.get("tile_m").asInt(),
                        a.get("tile_n").asInt(), a.get("mma_sync_share").asDouble(), eager,
                        a.has("mixed_eager_share") ? a.get("mixed_eager_share").asDouble() : eager));
            }
        });
        return out;
    }

    /** The GEMM tiles and warp-MMA share of a GPU's architecture. */
    public ArchitectureInfo architecture(GpuInfo gpu) {
        return architectures.get(gpu.architecture());
    }

    /** Fields that do not apply to a model or encoder are simply absent from the files: they read as 0. */
    private static ObjectMapper mapper() {
        return Json.newMapper().disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
    }

    /**
     * This catalog plus the entries of user catalog files (the bundled format, each list optional), in order, checked
     * the same way; an id, alias or NVML name already taken is an error naming both entries. Nothing is overwritten.
     *
     * @throws CatalogException one line naming the file and the entry, when a file cannot be read or is wrong
     */
    public Catalog withUserFiles(List<Path> files) {
        if (files == null || files.isEmpty()) {
            return this;
        }
        List<ModelInfo> allModels = new ArrayList<>(models.values());
        List<GpuInfo> allGpus = new ArrayList<>(gpus.values());
        List<EncoderInfo> allEncoders = new ArrayList<>(encoders.values());
        Map<String, String> allOrigins = new LinkedHashMap<>(origins);
        for (Path file : files) {
            UserCatalog.read(file, mapper(), allModels, allGpus, allEncoders, allOrigins);
        }
        return new Catalog(allModels, allGpus, allEncoders, allOrigins, architectures);
    }

    /**
     * Where an entry comes from: {@link #BUNDLED} or the user catalog file's path; {@code kind} is {@code gpu},
     * {@code model} or {@code encoder}.
     */
    public String origin(String kind, String id) {
        return origins.getOrDefault(kind + ":" + id, BUNDLED);
    }

    public List<ModelInfo> models() {
        return List.copyOf(models.values());
    }

    public List<GpuInfo> gpus() {
        return List.copyOf(gpus.values());
    }

    /** A model by its catalog id or one of its aliases ({@code flux-dev}), ignoring case. */
    public Optional<ModelInfo> model(String id) {
        return id == null ? Optional.empty()
                : Optional.ofNullable(modelNames.get(id.strip().toLowerCase(Locale.ROOT))).map(models::get);
    }

    public Optional<EncoderInfo> encoder(String id) {
        return id == null ? Optional.empty() : Optional.ofNullable(encoders.get(id));
    }

    public Optional<GpuInfo> gpu(String idOrName) {
        return resolveGpuId(idOrName).map(gpus::get);
    }

    /** A GPU id for an id, alias or NVML name, ignoring case, spaces against dashes and NVIDIA/Tesla/GeForce prefixes. */
    public Optional<String> resolveGpuId(String idOrName) {
        if (idOrName == null || idOrName.isBlank()) {
            return Optional.empty();
        }
        return Optional.ofNullable(gpuNames.get(normalize(idOrName)));
    }

    /**
     * The GPUs a family name such as {@code a100} could mean, when several (their memory differs; picking one would be a
     * silent guess); empty when the name resolves or matches at most one.
     */
    public List<String> ambiguousGpuIds(String name) {
        if (name == null || name.isBlank() || resolveGpuId(name).isPresent()) {
            return List.of();
        }
        String prefix = normalize(name) + "-";
        List<String> ids = gpus.keySet().stream().filter(id -> normalize(id).startsWith(prefix)).sorted().toList();
        return ids.size() >= 2 ? ids : List.of();
    }

    /** The model whose training configs use {@code configName} (e.g. {@code SanaMS_1600M_P1_D20}), in catalog order. */
    public List<ModelInfo> modelsForConfigName(String configName) {
        return models.values().stream()
                .filter(model -> model.configNames().stream().anyMatch(name -> name.equalsIgnoreCase(configName)))
                .toList();
    }

    /** Up to three catalog ids closest to {@code unknown} (edit distance), for "did you mean" messages. */
    public static List<String> nearest(String unknown, List<String> ids) {
        String needle = unknown == null ? "" : unknown.toLowerCase(Locale.ROOT);
        return ids.stream()
                .sorted(Comparator.comparingInt((String id) -> similarityDistance(needle, id)).thenComparing(id -> id))
                .limit(3)
                .toList();
    }

    public List<String> modelIds() {
        return List.copyOf(models.keySet());
    }

    public List<String> gpuIds() {
        return List.copyOf(gpus.keySet());
    }

    private void requireEncoder(ModelInfo model, String encoderId) {
        if (!encoders.containsKey(encoderId)) {
            throw new CatalogException("model " + model.id() + " (" + origin("model", model.id())
                    + ") names unknown encoder " + encoderId + "; known: " + String.join(", ", encoders.keySet()));
        }
    }

    static String normalize(String name) {
        String s = name.strip().toLowerCase(Locale.ROOT).replace('_', '-').replace(' ', '-');
        for (String prefix : List.of("nvidia-", "tesla-", "geforce-")) {
            if (s.startsWith(prefix)) {
                s = s.substring(prefix.length());
            }
        }
        return s;
    }

    /** Edit distance, also against the id cut to the typed length, so shared beginnings rank first. */
    private static int similarityDistance(String needle, String id) {
        if (!needle.isEmpty() && id.startsWith(needle)) {
            return 0; // a prefix ("pixart" for "pixart-sigma-xl-2") ranks first
        }
        String prefix = id.substring(0, Math.min(id.length(), needle.length()));
        return Math.min(distance(needle, id), distance(needle, prefix) + 1);
    }

    /** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours cost 1. */
    public static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }

    private static <T> Map<String, T> index(List<T> items, Function<T, String> id, String kind,
            Map<String, String> origins) {
        Map<String, T> map = new LinkedHashMap<>();
        for (T item : items) {
            if (map.put(id.apply(item), item) != null) {
                throw new CatalogException("duplicate " + kind + " id " + id.apply(item) + " ("
                        + origins.getOrDefault(kind + ":" + id.apply(item), BUNDLED) + ")");
            }
        }
        return Collections.unmodifiableMap(map);
    }

    private static JsonNode resource(ObjectMapper mapper, String file) {
        String resource = "/dev/trainwatch/estimator/catalog/" + file;
        try (InputStream in = Catalog.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("catalog resource missing: " + resource);
            }
            return mapper.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException("catalog resource unreadable: " + resource, e);
        }
    }

    private static <T> List<T> list(ObjectMapper mapper, JsonNode root, String field, Class<T> type) {
        CollectionType listType = mapper.getTypeFactory().constructCollectionType(List.class, type);
        return List.copyOf(mapper.<List<T>>convertValue(root.get(field), listType));
    }
}
