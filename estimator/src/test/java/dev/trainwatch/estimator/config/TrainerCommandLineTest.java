package dev.trainwatch.estimator.config;

import static dev.trainwatch.estimator.config.ConfigReadersTest.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trainers' command lines as their docs and users publish them (sources beside each), read as /proc/PID/cmdline
 * holds them: the shell's quotes gone, one argument per element.
 */
@Timeout(30)
class TrainerCommandLineTest {

    private final Estimator estimator = Estimator.bundled();
    @TempDir
    Path cwd;

    /**
     * "Files for Flux Training in Kohya_SS" (James Bridge, 2024-10-06), the sd-scripts command it gives, up to its
     * output name; its dataset.toml as sd-scripts' docs/config_README-en.md writes one.
     */
    static final String KOHYA_FLUX = "accelerate launch --mixed_precision bf16 --num_cpu_threads_per_process 1"
            + " flux_train_network.py --pretrained_model_name_or_path C://Change//Path//To//flux1-dev.safetensors"
            + " --clip_l C://Change//Path//To//clip_l.safetensors --t5xxl C://Change//Path//To//t5xxl_fp8_e4m3fn.safetensors"
            + " --ae C://Change//Path//To//ae.safetensors --cache_latents_to_disk --save_model_as safetensors --sdpa"
            + " --persistent_data_loader_workers --max_data_loader_n_workers 2 --seed 42 --gradient_checkpointing"
            + " --mixed_precision bf16 --save_precision bf16 --network_module networks.lora_flux --network_dim 16"
            + " --network_alpha 16 --optimizer_type adafactor --learning_rate 1e-3 --network_train_unet_only"
            + " --cache_text_encoder_outputs --cache_text_encoder_outputs_to_disk --fp8_base --highvram"
            + " --max_train_epochs 8 --save_every_n_epochs 2 --dataset_config dataset.toml"
            + " --output_dir C://Change//Path//To//Lora_Save_Directory --output_name lora_name";

    /** kohya-ss/musubi-tuner docs/wan.md, "Training" (its example command, as one line). */
    static final String MUSUBI_WAN = "accelerate launch --num_cpu_threads_per_process 1 --mixed_precision bf16"
            + " src/musubi_tuner/wan_train_network.py --task t2v-1.3B --dit path/to/wan2.1_xxx_bf16.safetensors"
            + " --dataset_config path/to/toml --sdpa --mixed_precision bf16 --fp8_base --optimizer_type adamw8bit"
            + " --learning_rate 2e-4 --gradient_checkpointing --max_data_loader_n_workers 2"
            + " --persistent_data_loader_workers --network_module networks.lora_wan --network_dim 32"
            + " --timestep_sampling shift --discrete_flow_shift 3.0 --max_train_epochs 16 --save_every_n_epochs 1"
            + " --seed 42 --output_dir path/to/output_dir --output_name name-of-lora";

    /** huggingface/diffusers examples/dreambooth/README_flux.md, the LoRA command with MODEL_NAME expanded. */
    static final String DIFFUSERS_FLUX = "accelerate launch train_dreambooth_lora_flux.py"
            + " --pretrained_model_name_or_path=black-forest-labs/FLUX.1-dev --instance_data_dir=dog"
            + " --output_dir=trained-flux-lora --mixed_precision=bf16 --instance_prompt=a_photo_of_sks_dog"
            + " --resolution=512 --train_batch_size=1 --guidance_scale=1 --gradient_accumulation_steps=4"
            + " --optimizer=prodigy --learning_rate=1. --report_to=wandb --lr_scheduler=constant --lr_warmup_steps=0"
            + " --max_train_steps=500 --validation_epochs=25 --seed=0";

    private Optional<ConfigReaders.Read> read(String line) {
        return read(List.of(line.split(" ")), Map.of());
    }

    private Optional<ConfigReaders.Read> read(List<String> argv, Map<String, String> env) {
        return TrainerCommandLine.read(argv, cwd, env, estimator::catalog);
    }

    @Test
    void aKohyaFluxCommandWithItsDatasetToml() throws IOException {
        Files.writeString(cwd.resolve("dataset.toml"), "[general]\nshuffle_caption = false\ncaption_extension = \".txt\"\n"
                + "keep_tokens = 1\n\n[[datasets]]\nresolution = 1024\nbatch_size = 2\n\n  [[datasets.subsets]]\n"
                + "  image_dir = \"train\"\n  num_repeats = 1\n");
        ConfigReaders.Read read = read(KOHYA_FLUX).orElseThrow();
        RunSpec s = read.spec();
        assertThat(s.model()).isEqualTo("flux.1-dev");
        assertThat(s.loraRank()).isEqualTo(16);
        assertThat(s.baseWeights()).isEqualTo("fp8");
        assertThat(s.optimizer()).isEqualTo("adafactor");
        assertThat(s.precision()).isEqualTo("bf16");
        assertThat(s.gradCheckpointing()).isTrue();
        assertThat(s.resolution()).isEqualTo(1024);
        assertThat(s.batch()).isEqualTo(2);
        assertThat(s.textFeatures()).isEqualTo("precomputed");
        assertThat(s.vaeFeatures()).isEqualTo("precomputed");
        assertThat(read.notes()).isEmpty();
        assertThat(s.notes()).isNull();
        assertThat(estimator.estimate(s.onHardware("rtx4090", null, null)).fits()).isTrue();
    }

    @Test
    void aDatasetTomlThatIsMissingOrUnreadableIsANoteNotAFailure() throws IOException {
        ConfigReaders.Read missing = read(KOHYA_FLUX).orElseThrow();
        assertThat(missing.spec().model()).isEqualTo("flux.1-dev");
        assertThat(missing.spec().resolution()).isNull();
        assertThat(missing.spec().notes()).containsExactly(
                "dataset TOML dataset.toml not found; resolution, batch and frames from the flags only");
        Files.createDirectory(cwd.resolve("dataset.toml"));
        assertThat(read(KOHYA_FLUX).orElseThrow().notes()).singleElement().asString()
                .startsWith("dataset TOML dataset.toml not readable: cannot be read:");
        Files.delete(cwd.resolve("dataset.toml"));
        Path dataset = Files.writeString(cwd.resolve("dataset.toml"), "[[datasets]]\nresolution = 1024\n");
        Files.setPosixFilePermissions(dataset, PosixFilePermissions.fromString("---------"));
        assumeFalse(Files.isReadable(dataset), "running as root: every file is readable");
        assertThat(read(KOHYA_FLUX).orElseThrow().notes()).containsExactly(
                "dataset TOML dataset.toml not readable: permission denied; resolution, batch and frames from the flags only");
    }

    @Test
    void musubisWanCommandFromItsDocs() {
        ConfigReaders.Read read = read(MUSUBI_WAN).orElseThrow();
        RunSpec s = read.spec();
        assertThat(s.model()).isEqualTo("wan2.1-t2v-1.3b"); // --task t2v-1.3B
        assertThat(s.loraRank()).isEqualTo(32);
        assertThat(s.baseWeights()).isEqualTo("fp8");
        assertThat(s.optimizer()).isEqualTo("adamw8bit");
        assertThat(s.textFeatures()).isEqualTo("precomputed"); // musubi trains from its caches
        assertThat(read.notes()).singleElement().asString().startsWith("dataset TOML path/to/toml not found");
    }

    @Test
    void aUsersMusubiCommandUnderPlainPythonWithBlockSwap() {
        // A Wan 2.1 I2V LoRA run's command from a public session handoff note (2026-01-03), paths shortened.
        ConfigReaders.Read read = read("python3 wan_train_network.py --task i2v-14B"
                + " --dit /models/diffusion_models/wan2.1_i2v_480p_14B_fp16.safetensors --dataset_config dataset.toml"
                + " --sdpa --mixed_precision fp16 --fp8_base --optimizer_type adamw --learning_rate 1e-4"
                + " --gradient_checkpointing --blocks_to_swap 35 --max_data_loader_n_workers 2"
                + " --network_module networks.lora_wan --network_dim 32 --network_alpha 16 --timestep_sampling shift"
                + " --discrete_flow_shift 5.0 --max_train_epochs 50 --save_every_n_epochs 10 --seed 42").orElseThrow();
        assertThat(read.spec().model()).isEqualTo("wan2.1-t2v-14b");
        assertThat(read.spec().blocksToSwap()).isEqualTo(35);
        assertThat(read.spec().precision()).isEqualTo("fp16");
    }

    @Test
    void diffusersFluxLoraFlags() {
        RunSpec s = read(DIFFUSERS_FLUX).orElseThrow().spec();
        assertThat(s.model()).isEqualTo("flux.1-dev");
        assertThat(s.resolution()).isEqualTo(512);
        assertThat(s.batch()).isEqualTo(1);
        assertThat(s.gradAccumulation()).isEqualTo(4);
        assertThat(s.precision()).isEqualTo("bf16");
        assertThat(s.optimizer()).isEqualTo("prodigy");
        assertThat(s.loraRank()).isEqualTo(4); // the script's --rank default
        assertThat(s.gradCheckpointing()).isFalse();
        assertThat(s.vaeFeatures()).isEqualTo("online"); // no --cache_latents
        assertThat(s.totalSteps()).isEqualTo(500L);
        // A user's run (a public Russian write-up), with the 8-bit Adam switch, checkpointing and rank 64.
        RunSpec user = read("accelerate launch train_dreambooth_lora_flux.py --pretrained_model_name_or_path"
                + " /workspace/models/flux-dev --instance_data_dir /workspace/dataset/origs --rank 64 --lora_alpha 64"
                + " --train_batch_size 2 --gradient_accumulation_steps 4 --learning_rate 1e-4 --max_train_steps 1000"
                + " --resolution 1024 --mixed_precision bf16 --gradient_checkpointing --use_8bit_adam --cache_latents"
                + " --report_to tensorboard").orElseThrow().spec();
        assertThat(user.loraRank()).isEqualTo(64);
        assertThat(user.optimizer()).isEqualTo("adamw8bit");
        assertThat(user.gradCheckpointing()).isTrue();
        assertThat(user.vaeFeatures()).isEqualTo("precomputed");
    }

    @Test
    void torchrunAndItsWorkersSeeThroughToTheKohyaConfigAndItsOverrides() throws IOException {
        Files.copy(fixture("trainers/kohya_flux_issue434.toml"), cwd.resolve("flux.toml"));
        for (String line : List.of(
                "torchrun --nproc_per_node=2 sd-scripts/flux_train_network.py --config_file flux.toml --network_dim 8",
                "/usr/bin/python3.10 -m torch.distributed.run --nproc_per_node 2 flux_train_network.py --config_file"
                        + " flux.toml --network_dim=8",
                "/venv/bin/python -u flux_train_network.py --config_file flux --network_dim 8")) {
            RunSpec s = read(line).orElseThrow().spec();
            assertThat(s.model()).as(line).isEqualTo("flux.1-dev");
            assertThat(s.loraRank()).as(line).isEqualTo(8); // the flag over the TOML's 32
            assertThat(s.totalSteps()).as(line).isEqualTo(4600L); // from the TOML
        }
        ConfigReaders.Read gone = read("torchrun flux_train_network.py --config_file missing.toml"
                + " --pretrained_model_name_or_path flux1-dev.safetensors --network_dim 8").orElseThrow();
        assertThat(gone.spec().loraRank()).isEqualTo(8);
        assertThat(gone.notes()).containsExactly(
                "config_file missing.toml not readable: no such file; the command line's flags only");
    }

    @Test
    void aLycorisNetworkIsSaidToBePricedAsLora() {
        ConfigReaders.Read read = read("accelerate launch flux_train_network.py --pretrained_model_name_or_path"
                + " flux1-dev.safetensors --network_module lycoris.kohya --network_dim 16").orElseThrow();
        assertThat(read.spec().loraRank()).isEqualTo(16);
        assertThat(read.notes()).containsExactly("network_module lycoris.kohya is not priced: estimated as LoRA rank 16");
    }

    @Test
    void oneTrainerAiToolkitAndSimpleTunerReadTheConfigTheyName() throws IOException {
        Files.createDirectories(cwd.resolve("training_presets"));
        Files.copy(fixture("trainers/onetrainer/flux_LoRA.json"), cwd.resolve("training_presets/#flux LoRA.json"));
        RunSpec oneTrainer = read(List.of("python", "scripts/train.py", "--config-path", "training_presets/#flux LoRA.json"),
                Map.of()).orElseThrow().spec();
        assertThat(oneTrainer.baseWeights()).isEqualTo("nf4");
        Files.createDirectories(cwd.resolve("config"));
        Files.copy(fixture("trainers/ai-toolkit_train_lora_flux_24gb.yaml"), cwd.resolve("config/flux.yaml"));
        ConfigReaders.Read aiToolkit = read("python run.py config/flux.yaml").orElseThrow();
        assertThat(aiToolkit.spec().loraRank()).isEqualTo(16);
        assertThat(aiToolkit.spec().notes()).isEqualTo(aiToolkit.notes()).isNotEmpty();
        assertThat(read("python train.py")).isEmpty(); // no config/config.json here: not SimpleTuner
        Files.copy(fixture("trainers/simpletuner/config.json"), cwd.resolve("config/config.json"));
        RunSpec simpleTuner = read("python train.py --lora_rank=32").orElseThrow().spec();
        assertThat(simpleTuner.model()).isEqualTo("flux.1-dev");
        assertThat(simpleTuner.loraRank()).isEqualTo(32); // the flag over the file's 16
        Files.createDirectories(cwd.resolve("elsewhere"));
        Files.copy(fixture("trainers/simpletuner/config.json"), cwd.resolve("elsewhere/my.json"));
        assertThat(read(List.of("python", "train.py"), Map.of("CONFIG_PATH", "elsewhere/my")).orElseThrow().spec()
                .baseWeights()).isEqualTo("int8");
    }

    @Test
    void aModelTrainwatchDoesNotKnowIsANoteWithoutASpec() {
        ConfigReaders.Read sdxl = read("accelerate launch sdxl_train_network.py --pretrained_model_name_or_path"
                + " /models/sd_xl_base_1.0.safetensors --network_module networks.lora --network_dim 32").orElseThrow();
        assertThat(sdxl.spec()).isNull();
        assertThat(sdxl.notes()).singleElement().asString().contains("is not one trainwatch knows");
    }

    @Test
    void programsThatAreNoKnownTrainerGiveNothing() {
        for (String line : List.of("python3 -c import_time;_time.sleep(60)", "/usr/bin/bash", "python manage.py runserver",
                "java -jar collector.jar", "python train.py --lr 1e-4", "torchrun --standalone", "python3",
                "python -m http.server 8000", "nvidia-smi dmon")) {
            assertThat(read(line)).as(line).isEmpty();
        }
        assertThat(read(List.of(), Map.of())).isEmpty();
    }

    @Test
    void anAgentLoadsNoCatalogForAProgramThatIsNoTrainer() {
        // The catalog (and the JSON/YAML readers behind it) is 12 MB of an agent's memory: asked for by trainers only.
        for (String line : List.of("python3 rank.py --rank 0", "python manage.py runserver", "python train.py --lr 1e-4",
                "torchrun --nproc_per_node 8 worker.py")) {
            assertThat(TrainerCommandLine.read(List.of(line.split(" ")), cwd, Map.of(), () -> {
                throw new AssertionError("catalog asked for " + line);
            })).as(line).isEmpty();
        }
    }
}
