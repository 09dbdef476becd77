package dev.trainwatch.cli;

import dev.trainwatch.estimator.config.ConfigReaders;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The options that describe a training run (a picocli mixin of estimate and watch); flags override --config. */
public final class EstimateOptions {

    @Option(names = "--model", paramLabel = "ID", description = "Model id (see 'trainwatch models'), e.g. pixart-sigma-xl-2.")
    String model;

    @Option(names = "--gpu", paramLabel = "ID", description = "GPU id or NVML name (see 'trainwatch gpus'), e.g. a100-80gb.")
    String gpu;

    @Option(names = "--gpus", paramLabel = "N", description = "Data-parallel size (GPUs the batch is replicated over).")
    Integer gpus;

    @Option(names = "--batch", paramLabel = "N", description = "Samples per GPU per micro-step.")
    Integer batch;

    @Option(names = "--resolution", paramLabel = "PX", description = "Square image side in pixels.")
    Integer resolution;

    @Option(names = "--height", paramLabel = "PX", description = "Image height in pixels (with --width).")
    Integer height;

    @Option(names = "--width", paramLabel = "PX", description = "Image width in pixels (with --height).")
    Integer width;

    @Option(names = "--frames", paramLabel = "N", description = "Video frames (video models).")
    Integer frames;

    @Option(names = "--precision", paramLabel = "P", description = "fp32, tf32, fp16 or bf16.")
    String precision;

    @Option(names = "--optimizer", paramLabel = "O", description = "adamw, adamw8bit, came, came8bit, adafactor, sgd, prodigy, lion or lion8bit.")
    String optimizer;

    @Option(names = "--grad-checkpointing", negatable = true, description = "Full activation recomputation (--no-grad-checkpointing to turn it off).")
    Boolean gradCheckpointing;

    @Option(names = "--ema", negatable = true, description = "Keep an fp32 EMA copy of the weights on the GPU (--no-ema to drop it).")
    Boolean ema;

    @Option(names = "--features", paramLabel = "F", description = "online (text/VAE encoders run every step) or precomputed.")
    String features;

    @Option(names = "--zero", paramLabel = "STAGE", description = "ZeRO stage 0-3 (3 also stands for FSDP full sharding).")
    Integer zero;

    @Option(names = "--attention", paramLabel = "A", description = "flash (fused/SDPA) or math (materialised scores).")
    String attention;

    @Option(names = "--grad-accumulation", paramLabel = "N", description = "Micro-steps per optimizer step.")
    Integer gradAccumulation;

    @Option(names = "--total-steps", paramLabel = "N", description = "Planned optimizer steps (for the total time).")
    Long totalSteps;

    @Option(names = "--text-features", paramLabel = "F", description = "online or precomputed for the text encoder alone (overrides --features).")
    String textFeatures;

    @Option(names = "--vae-features", paramLabel = "F", description = "online or precomputed for the VAE alone (overrides --features).")
    String vaeFeatures;

    @Option(names = "--weights", paramLabel = "W", description = "fp32 (fp32 parameters under autocast), mixed (half parameters, fp32 master weights in the optimizer: ColossalAI/DeepSpeed/FSDP) or pure (all half).")
    String weights;

    @Option(names = "--checkpoint-blocks", paramLabel = "N[,M]",
            description = "Blocks recomputed in backward: a number or a share (50%%), or one per block group (Open-Sora 2.0:"
                    + " double-stream,single-stream, e.g. 8,38).")
    String checkpointBlocks;

    @Option(names = "--vae-micro-batch", paramLabel = "N", description = "Images (frames) the video VAE encodes at once.")
    Integer vaeMicroBatch;

    @Option(names = "--kernels", paramLabel = "K",
            description = "eager (PyTorch eager, one kernel per operator; the default) or compiled (torch.compile or fused kernels).")
    String kernels;

    @Option(names = "--attention-precision", paramLabel = "P",
            description = "fp32 (attention upcast under autocast: PixArt/Sana fp32_attention=True) or half; default: the model's training code.")
    String attentionPrecision;

    @Option(names = "--lora-rank", paramLabel = "R",
            description = "Train rank-R LoRA adapters on --lora-targets; the base weights are frozen.")
    Integer loraRank;

    @Option(names = "--lora-targets", paramLabel = "KINDS", split = ",",
            description = "Module kinds that get LoRA adapters: attention, cross_attention, mlp, modulation, embedding, final or all (default attention).")
    List<String> loraTargets;

    @Option(names = "--train-modules", paramLabel = "KINDS", split = ",",
            description = "A frozen-backbone fine-tune: only these module kinds train (same kinds as --lora-targets).")
    List<String> trainModules;

    @Option(names = "--base-weights", paramLabel = "W",
            description = "Storage of the frozen base weights: bf16, fp16, fp8, int8, int4 or nf4 (kohya/musubi --fp8_base,"
                    + " ai-toolkit quantize, SimpleTuner base_model_precision); compute stays --precision.")
    String baseWeights;

    @Option(names = "--blocks-to-swap", paramLabel = "N",
            description = "Transformer blocks kept in pinned host memory and streamed to the GPU each step (kohya's and"
                    + " musubi's blocks_to_swap).")
    Integer blocksToSwap;

    @Option(names = "--images", paramLabel = "N",
            description = "Samples per epoch: with --epochs, the total steps from the global batch (batch x GPUs x accumulation).")
    Long images;

    @Option(names = "--epochs", paramLabel = "E", description = "Passes over --images (default 1).")
    Double epochs;

    @Option(names = "--config", paramLabel = "FILE", description = "A training config: PixArt or Open-Sora .py, Sana or ai-toolkit .yaml, kohya sd-scripts or musubi-tuner .toml, SimpleTuner config.json; flags override it.")
    Path config;

    @picocli.CommandLine.Mixin
    CatalogOption catalog = new CatalogOption();

    /** What the config reader could not map, one line each prefixed with the file name (empty before toRunSpec). */
    List<String> configNotes = List.of();

    /** True when no option at all was given (the caller may then have nothing to estimate). */
    public boolean isEmpty() {
        return config == null && flags().equals(RunSpec.empty());
    }

    /**
     * The run spec the options describe: the config file's values (if any) overridden by the flags.
     *
     * @throws dev.trainwatch.estimator.config.ConfigException when the config cannot be read (one line)
     */
    public RunSpec toRunSpec() {
        RunSpec fromFile = RunSpec.empty();
        if (config != null) {
            ConfigReaders.Read read = ConfigReaders.readWithNotes(config, catalog.estimator().catalog());
            fromFile = read.spec();
            configNotes = read.notes().stream().map(n -> config.getFileName() + ": " + n).toList();
        }
        RunSpec spec = fromFile.overriddenBy(flags());
        if (checkpointBlocks != null) {
            spec = spec.withRegime(spec.textFeatures(), spec.vaeFeatures(), spec.weights(),
                    blocks(checkpointBlocks, spec.model()), spec.vaeMicroBatch(), spec.buckets());
        }
        return spec;
    }

    /** "8,38", "14" or "50%" (of every block group) as blocks per group. */
    private List<Integer> blocks(String value, String model) {
        String[] parts = value.split(",");
        List<Integer> out = new ArrayList<>();
        int[] groups = null;
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i].strip();
            try {
                if (part.endsWith("%")) {
                    double share = Double.parseDouble(part.substring(0, part.length() - 1)) / 100;
                    if (!(share >= 0 && share <= 1)) {
                        throw new UserError(ExitCodes.USAGE, "--checkpoint-blocks: a share is 0% to 100%, got " + part);
                    }
                    if (model == null) {
                        throw new UserError(ExitCodes.USAGE, "--checkpoint-blocks " + part + " needs the model (--model or --config)");
                    }
                    if (groups == null) {
                        groups = catalog.estimator().blockGroups(model);
                    }
                    if (parts.length == 1) {
                        for (int depth : groups) {
                            out.add((int) Math.round(depth * share));
                        }
                        return out;
                    }
                    out.add((int) Math.round(groups[Math.min(i, groups.length - 1)] * share));
                } else {
                    out.add(Integer.valueOf(part));
                }
            } catch (NumberFormatException e) {
                throw new UserError(ExitCodes.USAGE, "--checkpoint-blocks wants block counts or shares (8,38 or 50%), got '"
                        + value + "'");
            }
        }
        return out;
    }

    private RunSpec flags() {
        if (trainModules != null && (loraTargets != null || loraRank != null)) {
            throw new UserError(ExitCodes.USAGE, "--train-modules is a frozen-backbone fine-tune; with LoRA use --lora-rank"
                    + " and --lora-targets instead");
        }
        if (epochs != null && images == null) {
            throw new UserError(ExitCodes.USAGE, "--epochs needs --images (samples per epoch)");
        }
        return new RunSpec(model, gpu, gpus, batch, resolution, height, width, frames, precision, optimizer,
                gradCheckpointing, ema, features, zero, attention, gradAccumulation, totalSteps)
                .withRegime(textFeatures, vaeFeatures, weights, null, vaeMicroBatch, null)
                .withPhysics(kernels, attentionPrecision, loraRank, trainModules != null ? trainModules : loraTargets,
                        images, epochs)
                .withTrainer(baseWeights, blocksToSwap);
    }
}
