package dev.trainwatch.estimator.config;

import static dev.trainwatch.estimator.config.ConfigReadersTest.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trainers' own configs (sources in src/test/resources/configs/trainers/SOURCES.md): ai-toolkit's 24 GB Flux
 * example job and a kohya sd-scripts Flux LoRA TOML a user posted, read into specs and priced.
 */
@Timeout(30)
class TrainerConfigsTest {

    private final Estimator estimator = Estimator.bundled();

    @Test
    void aiToolkitsTwentyFourGigabyteFluxExample() {
        ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture("trainers/ai-toolkit_train_lora_flux_24gb.yaml"),
                estimator.catalog());
        RunSpec s = read.spec();
        assertThat(s.model()).isEqualTo("flux.1-dev");
        assertThat(s.loraRank()).isEqualTo(16);
        assertThat(s.baseWeights()).isEqualTo("fp8"); // quantize: true, qtype's default qfloat8
        assertThat(s.batch()).isEqualTo(1);
        assertThat(s.resolution()).isEqualTo(1024); // the largest of [512, 768, 1024]
        assertThat(s.optimizer()).isEqualTo("adamw8bit");
        assertThat(s.precision()).isEqualTo("bf16");
        assertThat(s.gradCheckpointing()).isTrue();
        assertThat(s.ema()).isTrue();
        assertThat(s.totalSteps()).isEqualTo(2000L);
        assertThat(s.vaeFeatures()).isEqualTo("precomputed");
        assertThat(s.textFeatures()).isEqualTo("online"); // T5 stays loaded without cache_text_embeddings
        assertThat(read.notes()).anySatisfy(n -> assertThat(n).contains("largest bucket"));
        Estimate e = estimator.estimate(s.overriddenBy(RunSpec.empty().onHardware("rtx4090", null, null)));
        assertThat(e.model()).isEqualTo("flux.1-dev");
        assertThat(e.breakdown()).containsKey("frozen_encoders");
    }

    @Test
    void aKohyaFluxTomlWithFp8BaseAndCachedOutputs() {
        ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture("trainers/kohya_flux_issue434.toml"),
                estimator.catalog());
        RunSpec s = read.spec();
        assertThat(s.model()).isEqualTo("flux.1-dev"); // from flux1-dev.safetensors
        assertThat(s.loraRank()).isEqualTo(32);
        assertThat(s.loraTargets()).isEqualTo(List.of("attention", "mlp", "modulation"));
        assertThat(s.baseWeights()).isEqualTo("fp8");
        assertThat(s.resolution()).isEqualTo(1024);
        assertThat(s.batch()).isEqualTo(1);
        assertThat(s.optimizer()).isEqualTo("adamw8bit");
        assertThat(s.totalSteps()).isEqualTo(4600L);
        assertThat(s.textFeatures()).isEqualTo("precomputed");
        assertThat(s.vaeFeatures()).isEqualTo("precomputed");
        Estimate e = estimator.estimate(s.overriddenBy(RunSpec.empty().onHardware("rtx4090", null, null)));
        assertThat(e.fits()).isTrue();
    }

    @Test
    void aMusubiTomlWithItsDatasetConfig(@TempDir Path dir) throws IOException {
        // musubi-tuner's documented dataset format: [general] then [[datasets]] with target_frames.
        Files.writeString(dir.resolve("dataset.toml"), "[general]\nresolution = [960, 544]\ncaption_extension = \".txt\"\n"
                + "batch_size = 1\nenable_bucket = true\n\n[[datasets]]\nvideo_directory = \"v\"\ncache_directory = \"c\"\n"
                + "target_frames = [1, 25, 45]\nframe_extraction = \"head\"\n");
        Path train = dir.resolve("wan.toml");
        Files.writeString(train, "task = \"t2v-14B\"\ndit = \"/models/wan2.1_t2v_14B_bf16.safetensors\"\n"
                + "dataset_config = \"dataset.toml\"\nnetwork_module = \"networks.lora_wan\"\nnetwork_dim = 32\n"
                + "fp8_base = true\nblocks_to_swap = 20\noptimizer_type = \"adamw8bit\"\nmixed_precision = \"bf16\"\n"
                + "gradient_checkpointing = true\n");
        RunSpec s = BundledConfigs.readWithNotes(train, estimator.catalog()).spec();
        assertThat(s.model()).isEqualTo("wan2.1-t2v-14b");
        assertThat(s.resolution()).isEqualTo(960);
        assertThat(s.frames()).isEqualTo(45);
        assertThat(s.blocksToSwap()).isEqualTo(20);
        assertThat(s.features()).isNull();
        assertThat(s.textFeatures()).isEqualTo("precomputed"); // musubi trains from its caches
        assertThat(estimator.estimate(s.overriddenBy(RunSpec.empty().onHardware("rtx4090", null, null))).peakMemoryBytes())
                .isPositive();
        Path broken = dir.resolve("broken.toml");
        Files.writeString(broken, "network_dim = = 3\n");
        assertThatThrownBy(() -> BundledConfigs.read(broken)).hasMessageStartingWith(broken + ":1: not valid TOML");
        Path unknown = dir.resolve("other.toml");
        Files.writeString(unknown, "pretrained_model_name_or_path = \"/m/sdxl_base.safetensors\"\n");
        assertThatThrownBy(() -> BundledConfigs.read(unknown)).hasMessageContaining("is not one trainwatch knows")
                .hasMessageContaining("--catalog");
    }

    @Test
    void theStepsBetweenSamplingPassesComeFromTheConfigThatSaysIt(@TempDir Path dir) throws IOException {
        assertThat(BundledConfigs.read(fixture("trainers/ai-toolkit_train_lora_flux_24gb.yaml"), estimator.catalog())
                .sampleEvery()).isEqualTo(250); // sample.sample_every
        assertThat(BundledConfigs.read(fixture("trainers/simpletuner/config.json"), estimator.catalog()).sampleEvery())
                .isEqualTo(5); // validation_steps
        assertThat(BundledConfigs.read(fixture("trainers/kohya_flux_issue434.toml"), estimator.catalog()).sampleEvery())
                .isNull(); // no sample_every_n_*: the run never samples
        String kohya = Files.readString(fixture("trainers/kohya_flux_issue434.toml"));
        Path steps = dir.resolve("steps.toml");
        Files.writeString(steps, kohya + "\nsample_every_n_steps = 200\nsample_prompts = \"prompts.txt\"\n");
        RunSpec s = BundledConfigs.read(steps, estimator.catalog());
        assertThat(s.sampleEvery()).isEqualTo(200);
        Estimate e = estimator.estimate(s.overriddenBy(RunSpec.empty().onHardware("rtx4090", null, null)));
        assertThat(e.spec().sampleEvery()).isEqualTo(200);
        Path epochs = dir.resolve("epochs.toml");
        Files.writeString(epochs, kohya + "\nsample_every_n_epochs = 2\n");
        ConfigReaders.Read read = BundledConfigs.readWithNotes(epochs, estimator.catalog());
        assertThat(read.spec().sampleEvery()).isNull();
        assertThat(read.notes()).contains("sample_every_n_epochs 2: samples every so many epochs; the step it samples "
                + "at is not known");
        assertThatThrownBy(() -> estimator.estimate(s.overriddenBy(RunSpec.empty().onHardware("rtx4090", null, null))
                .withSampling(0))).hasMessageContaining("sample_every must be at least 1 step");
    }

    @Test
    void simpleTunersFluxLoraExampleWithItsDataBackend(@TempDir Path dir) throws IOException {
        Path config = fixture("trainers/simpletuner/config.json");
        ConfigReaders.Read asShipped = BundledConfigs.readWithNotes(config, estimator.catalog());
        RunSpec s = asShipped.spec();
        assertThat(s.model()).isEqualTo("flux.1-dev");
        assertThat(s.loraRank()).isEqualTo(16);
        assertThat(s.baseWeights()).isEqualTo("int8"); // base_model_precision int8-quanto
        assertThat(s.optimizer()).isEqualTo("adamw");
        assertThat(s.features()).isEqualTo("precomputed");
        assertThat(s.ema()).isFalse();
        assertThat(s.totalSteps()).isEqualTo(100L);
        // Its data_backend_config is a path inside SimpleTuner's checkout: said, not guessed.
        assertThat(asShipped.notes()).anySatisfy(n -> assertThat(n).startsWith("data_backend_config"));
        assertThat(s.resolution()).isNull();
        // Pointed at the 1024 px dataset file beside it, the resolution comes from there.
        String json = Files.readString(config).replace("config/examples/multidatabackend-small-dreambooth-512px.json",
                "multidatabackend-small-dreambooth-1024px.json");
        Files.writeString(dir.resolve("config.json"), json);
        Files.copy(fixture("trainers/simpletuner/multidatabackend-small-dreambooth-1024px.json"),
                dir.resolve("multidatabackend-small-dreambooth-1024px.json"));
        RunSpec beside = BundledConfigs.read(dir.resolve("config.json"), estimator.catalog());
        assertThat(beside.resolution()).isEqualTo(1024);
        Estimate e = estimator.estimate(beside.overriddenBy(RunSpec.empty().onHardware("a100-80gb", null, null)));
        assertThat(e.spec().baseWeights()).isEqualTo("int8");
        Path other = dir.resolve("onetrainer.json");
        Files.writeString(other, "{\"training_method\": \"LORA\"}");
        assertThatThrownBy(() -> BundledConfigs.read(other)).hasMessageContaining("model_type and training_method");
    }

    @Test
    void oneTrainersFluxPresetWithItsDefaults() {
        ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture("trainers/onetrainer/flux_LoRA.json"),
                estimator.catalog());
        RunSpec s = read.spec();
        assertThat(s.model()).isEqualTo("flux.1-dev");
        assertThat(s.loraRank()).isEqualTo(16); // not in the preset: TrainConfig's default
        assertThat(s.baseWeights()).isEqualTo("nf4"); // transformer.weight_dtype NFLOAT_4
        assertThat(s.batch()).isEqualTo(4);
        assertThat(s.resolution()).isEqualTo(768);
        assertThat(s.precision()).isEqualTo("bf16");
        assertThat(s.optimizer()).isEqualTo("adamw");
        assertThat(s.gradCheckpointing()).isTrue();
        assertThat(s.vaeFeatures()).isEqualTo("precomputed");
        assertThat(s.blocksToSwap()).isNull();
        assertThat(read.notes()).isEmpty();
        assertThat(estimator.estimate(s.overriddenBy(RunSpec.empty().onHardware("rtx4090", null, null))).fits()).isTrue();
    }

    @Test
    void oneTrainersQwenAndHunyuanPresetsOffloadLayers() {
        ConfigReaders.Read qwen = BundledConfigs.readWithNotes(fixture("trainers/onetrainer/qwen_LoRA_24GB.json"),
                estimator.catalog());
        assertThat(qwen.spec().model()).isEqualTo("qwen-image");
        assertThat(qwen.spec().baseWeights()).isEqualTo("fp8");
        assertThat(qwen.spec().batch()).isEqualTo(2);
        assertThat(qwen.spec().blocksToSwap()).isEqualTo(6); // 0.1 of its 60 blocks
        assertThat(qwen.notes()).containsExactly("layer offload fraction 0.1: priced as 6 of 60 blocks swapped");
        RunSpec hunyuan = BundledConfigs.read(fixture("trainers/onetrainer/hunyuan_video_LoRA.json"), estimator.catalog());
        assertThat(hunyuan.model()).isEqualTo("hunyuanvideo");
        assertThat(hunyuan.blocksToSwap()).isEqualTo(30); // 0.5 of 20 double + 40 single blocks
        assertThat(hunyuan.frames()).isNull(); // an image-sized default; OneTrainer's frames key is absent
    }
}
