package dev.trainwatch.estimator;

import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.estimator.catalog.CatalogException;
import dev.trainwatch.estimator.catalog.ModelInfo;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Predicts what a run costs: parameters, peak memory by term, step time, the largest batch and the changes that help.
 * A pure function of the catalogs, an optional {@link Calibration} and the {@link RunSpec}; thread-safe. The work:
 * {@link SpecResolver}, {@link MemoryModel}, {@link StepTimeModel}, {@link Plans}, {@link Advice},
 * {@link BucketPricing}.
 */
public final class Estimator {

    private final Catalog catalog;
    private final Map<String, ModelProfile> profiles;
    private final SpecResolver resolver;

    private Estimator(Catalog catalog, Map<String, ModelProfile> profiles, Calibration calibration) {
        this.catalog = catalog;
        this.profiles = profiles;
        this.resolver = new SpecResolver(catalog, profiles, calibration);
    }

    /** An estimator over the bundled model, encoder and GPU catalogs. */
    public static Estimator bundled() {
        return BundledHolder.BUNDLED;
    }

    /** The bundled catalogs are read once; the estimator over them is immutable and shared. */
    private static final class BundledHolder {
        static final Estimator BUNDLED = of(Catalog.bundled());
    }

    /**
     * An estimator over a catalog (e.g. {@code Catalog.bundled().withUserFiles(files)}).
     *
     * @throws dev.trainwatch.estimator.catalog.CatalogException when a model cannot be built from its entry
     */
    public static Estimator of(Catalog catalog) {
        Map<String, ModelProfile> profiles = new LinkedHashMap<>();
        for (ModelInfo model : catalog.models()) {
            try {
                profiles.put(model.id(), new ModelProfile(model));
            } catch (RuntimeException e) {
                throw new CatalogException("model " + model.id() + " ("
                        + catalog.origin("model", model.id()) + ") cannot be built: " + e.getMessage());
            }
        }
        return new Estimator(catalog, Collections.unmodifiableMap(profiles), Calibration.NONE);
    }

    /**
     * The bundled catalogs plus user catalog files, in order (none: the bundled estimator).
     *
     * @throws dev.trainwatch.estimator.catalog.CatalogException one line naming the file and entry when one is wrong
     */
    public static Estimator withUserCatalogs(List<Path> files) {
        if (files == null || files.isEmpty()) {
            return bundled();
        }
        return of(Catalog.bundled().withUserFiles(files));
    }

    /** The same estimator with step time and memory scaled per (GPU id, model family). */
    public Estimator withCalibration(Calibration calibration) {
        return new Estimator(catalog, profiles, calibration == null ? Calibration.NONE : calibration);
    }

    public Catalog catalog() {
        return catalog;
    }

    /** Blocks per block group in forward order, as {@code checkpoint_blocks} counts them. */
    public int[] blockGroups(String modelId) {
        return Architecture.groupDepths(resolver.profile(modelId).info);
    }

    /** Parameter count derived from the architecture. */
    public long params(String modelId) {
        return resolver.profile(modelId).params;
    }

    /** Parameters that receive gradients. */
    public long trainableParams(String modelId) {
        return resolver.profile(modelId).trainableParams;
    }

    /** Forward MACs per sample at a resolution (frames for video models), from the architecture. */
    public double forwardMacs(String modelId, int height, int width, int frames) {
        return ResolvedRun.Sizes.of(resolver.profile(modelId), frames, height, width).forwardMacsPerSample();
    }

    /**
     * Prices a run.
     *
     * @throws InvalidSpecException for unknown ids or impossible values, with a one-line message
     */
    public Estimate estimate(RunSpec spec) {
        if (spec != null && spec.buckets() != null && !spec.buckets().isEmpty()) {
            return BucketPricing.estimate(spec, resolver::resolve, this::estimate);
        }
        ResolvedRun run = resolver.resolve(spec);
        Costs costs = Costs.of(run, run.batch());
        int maxBatch = MemoryModel.maxBatch(run, costs.peakBytes());
        List<Suggestion> suggestions = Plans.suggestions(run, costs, maxBatch);
        List<String> notes = Advice.notes(run, costs);
        Double total = run.totalSteps() == null ? null : costs.stepSeconds() * run.totalSteps();
        Map<String, Long> host = Collections.unmodifiableMap(TrainerLevers.hostTerms(run));
        Map<String, Long> sampling = Collections.unmodifiableMap(TrainerLevers.samplingTerms(run, costs.memory()));
        notes = TrainerLevers.withSamplingNote(notes, run, costs.peakBytes(), TrainerLevers.sum(sampling));
        RunSpec resolved = spec == null ? run.resolvedSpec()
                : run.resolvedSpec().withNotes(spec.notes()).withSampling(spec.sampleEvery());
        return new Estimate(resolved, run.profile().info.id(), run.gpu().id(), run.profile().params,
                run.trainableParams(), costs.peakBytes(), run.gpu().memoryBytes(),
                costs.peakBytes() <= run.gpu().memoryBytes(), maxBatch, costs.stepSeconds(), costs.samplesPerSecond(),
                costs.memory(), costs.time(), total, suggestions, notes, StepTimeModel.flops(run), costs.operations(),
                Advice.why(run, costs), TrainerLevers.sum(host), host, TrainerLevers.sum(sampling), sampling);
    }

    /**
     * Re-prices an observed run on other hardware (Habitat, USENIX ATC '21): the target's operations priced on the
     * target, times observed / predicted on the source, plus the observed data wait scaled to the target's batch.
     *
     * @param target the same run on the target (see {@link RunSpec#onHardware}); its model must be the observed one
     * @throws InvalidSpecException for an impossible target or observation
     */
    public Repricing reprice(ObservedRun observed, RunSpec target) {
        Estimate source = estimate(observed.spec());
        Estimate there = estimate(target);
        if (!there.model().equals(source.model())) {
            throw new InvalidSpecException("re-pricing keeps the model: the run trained " + source.model() + ", the target says "
                    + there.model());
        }
        List<String> notes = new ArrayList<>();
        double data = observed.dataSeconds() == null ? 0 : observed.dataSeconds();
        double sourceEncoders = source.stepBreakdown().getOrDefault("text_encoder", 0.0)
                + source.stepBreakdown().getOrDefault("vae_encoder", 0.0);
        double sourceModel = source.stepSeconds() - sourceEncoders;
        double observedEncoders = observed.encoderSeconds() != null ? observed.encoderSeconds() : Double.NaN;
        double modelAnchor;
        double encoderAnchor;
        if (Double.isNaN(observedEncoders) && observed.dataIncludesEncoders() && observed.dataSeconds() != null
                && sourceEncoders > 0) {
            // The data timer spans the loader and the online encoders: the rest of the step is the model alone.
            modelAnchor = Math.max(1e-3, observed.stepSeconds() - data) / sourceModel;
            double encoders = Math.min(data, sourceEncoders * modelAnchor);
            encoderAnchor = encoders / sourceEncoders;
            notes.add(String.format(Locale.ROOT, "anchored on the observed %.3f s step: its %.3f s data time holds"
                    + " the online encoders (%.3f s, x%.2f of their price) and %.3f s loader wait; the model x%.2f of its"
                    + " price", observed.stepSeconds(), data, encoders, encoderAnchor, data - encoders, modelAnchor));
            data -= encoders;
        } else if (!Double.isNaN(observedEncoders) && sourceEncoders > 0) {
            encoderAnchor = observedEncoders / sourceEncoders;
            modelAnchor = Math.max(1e-3, observed.stepSeconds() - data - observedEncoders) / sourceModel;
            notes.add(String.format(Locale.ROOT, "anchored on the observed %.3f s step: %.3f s data wait, %.3f s"
                    + " online encoders (x%.2f of their price), the rest x%.2f of its price", observed.stepSeconds(), data,
                    observedEncoders, encoderAnchor, modelAnchor));
        } else {
            modelAnchor = Math.max(1e-3, observed.stepSeconds() - data) / source.stepSeconds();
            encoderAnchor = modelAnchor;
            notes.add(String.format(Locale.ROOT, "anchored on the observed %.3f s step%s: the GPU work took x%.2f"
                    + " of its price on %s", observed.stepSeconds(), observed.dataSeconds() == null ? " (data wait unknown:"
                    + " counted as GPU work)" : String.format(Locale.ROOT, " less %.3f s data wait", data),
                    modelAnchor, source.gpu()));
        }
        Map<String, Double> operations = new LinkedHashMap<>();
        Map<String, Double> priced = there.stepOperations() != null ? there.stepOperations() : there.stepBreakdown();
        double step = 0;
        for (Map.Entry<String, Double> op : priced.entrySet()) {
            boolean encoder = op.getKey().equals("text_encoder") || op.getKey().equals("vae_encoder");
            double v = op.getValue() * (encoder ? encoderAnchor : modelAnchor);
            operations.put(op.getKey(), v);
            step += v;
        }
        if (data > 0) {
            // Each rank's loader feeds its own batch: the wait scales with the per-GPU batch (same hosts and storage).
            double scaled = data * there.spec().batch() / (double) source.spec().batch();
            operations.put("data_wait", scaled);
            step += scaled;
            notes.add("data wait scaled with the per-GPU batch, as if the target had the same hosts and storage per GPU");
        }
        double samples = (double) there.spec().batch() * there.spec().gradAccumulation() * there.spec().gpus() / step;
        Long totalSteps = there.spec().totalSteps();
        Double total = totalSteps == null ? null : step * totalSteps;
        Double remaining = totalSteps == null || observed.stepsDone() == null ? null
                : step * Math.max(0, totalSteps - observed.stepsDone());
        return new Repricing(source, there, observed.stepSeconds(), modelAnchor, encoderAnchor, step,
                Collections.unmodifiableMap(operations), samples, total, remaining, List.copyOf(notes));
    }
}
