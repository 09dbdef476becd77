package dev.trainwatch.estimator.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.InvalidSpecException;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UserCatalogTest {

    @TempDir
    Path dir;

    static final String GPU = """
            {"id": "mi300x", "name": "AMD Instinct MI300X", "architecture": "hopper", "memory_bytes": 206158430208,
             "bandwidth_gbps": 5300, "fp16_tflops": 1307, "bf16_tflops": 1307, "tf32_tflops": 654, "fp32_tflops": 163,
             "allreduce_gbps": 40, "efficiency": 0.3, "nvml_names": [], "aliases": ["mi300"]}""";

    /** A DiT-XL/2 twin at patch 1 with its own id: a model only a user catalog has. */
    static final String MODEL = """
            {"id": "my-dit-xl-1", "name": "DiT-XL/1 (mine)", "family": "dit", "architecture": "dit", "depth": 28,
             "hidden": 1152, "heads": 16, "patch": 1, "mlp_ratio": 4.0, "latent_channels": 4, "latent_downsample": 8,
             "learn_sigma": true, "num_classes": 1000, "pos_embed_resolution": 256, "vae": "sd-vae",
             "defaults": {"resolution": 256, "precision": "bf16", "optimizer": "adamw", "ema": true,
                          "grad_checkpointing": false, "features": "precomputed", "attention": "flash"}}""";

    private Path write(String name, String json) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, json);
        return file;
    }

    @Test
    void aUserFileAddsAGpuAndAModelWithoutARebuildAndSaysWhereTheyCameFrom() throws IOException {
        Path file = write("catalog.json", "{\"gpus\": [" + GPU + "], \"models\": [" + MODEL + "]}");
        Estimator estimator = Estimator.withUserCatalogs(List.of(file));
        assertThat(estimator.catalog().origin("gpu", "mi300x")).isEqualTo(file.toString());
        assertThat(estimator.catalog().origin("model", "my-dit-xl-1")).isEqualTo(file.toString());
        assertThat(estimator.catalog().origin("gpu", "a100-80gb")).isEqualTo(Catalog.BUNDLED);
        assertThat(estimator.catalog().resolveGpuId("MI300")).contains("mi300x");
        Estimate e = estimator.estimate(new RunSpec("my-dit-xl-1", "mi300x", 1, 8, null, null, null, null, null, null,
                null, null, null, null, null, null, null));
        assertThat(e.gpuMemoryBytes()).isEqualTo(206158430208L);
        // Patch 1 has four times the tokens of patch 2: more compute than the bundled DiT-XL/2 on the same card.
        Estimate xl2 = estimator.estimate(new RunSpec("dit-xl-2", "mi300x", 1, 8, null, null, null, null, "bf16", null,
                null, null, "precomputed", null, "flash", null, null));
        assertThat(e.stepSeconds()).isGreaterThan(2 * xl2.stepSeconds());
        // The bundled estimator is untouched.
        assertThat(Estimator.bundled().catalog().resolveGpuId("mi300x")).isEmpty();
    }

    @Test
    void aTakenIdOrNameIsAnErrorNamingBothEntriesNotAnOverwrite() throws IOException {
        Path sameId = write("a.json", "{\"gpus\": [" + GPU.replace("\"mi300x\"", "\"a100-80gb\"") + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(sameId))).isInstanceOf(CatalogException.class)
                .hasMessage("catalog " + sameId + ": GPU a100-80gb is already taken by GPU a100-80gb (bundled);"
                        + " give it another id or name (entries are never overwritten)");
        Path sameNvml = write("b.json", "{\"gpus\": [" + GPU.replace("\"nvml_names\": []", "\"nvml_names\": [\"NVIDIA H800\"]") + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(sameNvml))).isInstanceOf(CatalogException.class)
                .hasMessageContaining("GPU mi300x (name 'NVIDIA H800') is already taken by GPU h800-sxm (bundled)");
        Path first = write("c.json", "{\"models\": [" + MODEL + "]}");
        Path second = write("d.json", "{\"models\": [" + MODEL + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(first, second))).isInstanceOf(CatalogException.class)
                .hasMessageContaining("catalog " + second + ": model my-dit-xl-1 is already taken by model my-dit-xl-1 (" + first + ")");
    }

    @Test
    void wrongEntriesGetOneLineNamingTheFileAndTheEntry() throws IOException {
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(dir.resolve("missing.json"))))
                .hasMessage("catalog " + dir.resolve("missing.json") + ": no such file");
        Path bad = write("bad.json", "{\"gpus\": [");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(bad))).isInstanceOf(CatalogException.class)
                .hasMessageStartingWith("catalog " + bad + ": not valid JSON at line 1");
        Path typo = write("typo.json", "{\"gpus\": [" + GPU.replace("\"memory_bytes\"", "\"memory_gb\"") + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(typo))).isInstanceOf(CatalogException.class)
                .hasMessageStartingWith("catalog " + typo + ": gpus[0] (mi300x): Unrecognized field \"memory_gb\"")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        Path zero = write("zero.json", "{\"gpus\": [" + GPU.replace("\"bandwidth_gbps\": 5300", "\"bandwidth_gbps\": 0") + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(zero)))
                .hasMessage("catalog " + zero + ": GPU mi300x: bandwidth_gbps should be above 0, got 0");
        Path arch = write("arch.json", "{\"gpus\": [" + GPU.replace("\"hopper\"", "\"cdna3\"") + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(arch)))
                .hasMessageContaining("architecture should be one of ada, ampere, blackwell, hopper, turing, volta, got cdna3");
        Path encoder = write("enc.json", "{\"models\": [" + MODEL.replace("\"sd-vae\"", "\"my-vae\"") + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(encoder)))
                .hasMessageStartingWith("catalog " + encoder + ": model my-dit-xl-1: encoder my-vae is not in the catalog; known: t5-xxl");
        Path section = write("section.json", "{\"gpu\": []}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(section)))
                .hasMessage("catalog " + section + ": unknown section 'gpu' (expected gpus, models, encoders)");
    }

    @Test
    void theBundledCatalogHasTheGpusPeopleTrainOnNowWithTheirOwnNvmlNames() {
        Estimator e = Estimator.bundled();
        assertThat(e.catalog().resolveGpuId("NVIDIA B200")).contains("b200");
        assertThat(e.catalog().resolveGpuId("NVIDIA H800")).contains("h800-sxm");
        assertThat(e.catalog().resolveGpuId("NVIDIA H800 PCIe")).contains("h800-pcie");
        assertThat(e.catalog().resolveGpuId("NVIDIA H100 80GB HBM3")).contains("h100-sxm");
        assertThat(e.catalog().resolveGpuId("NVIDIA H100 NVL")).contains("h100-nvl");
        assertThat(e.catalog().resolveGpuId("NVIDIA H20")).contains("h20");
        assertThat(e.catalog().resolveGpuId("NVIDIA L40")).contains("l40");
        assertThat(e.catalog().resolveGpuId("NVIDIA GeForce RTX 5090")).contains("rtx5090");
        assertThat(e.catalog().resolveGpuId("NVIDIA GB200")).contains("gb200");
        assertThat(e.catalog().resolveGpuId("NVIDIA B100")).contains("b100");
        // "h800" is what NVML calls the SXM card ("NVIDIA H800"); the PCIe card says so in its name.
        assertThat(e.catalog().resolveGpuId("h800")).contains("h800-sxm");
        assertThat(e.catalog().ambiguousGpuIds("h100")).containsExactly("h100-nvl", "h100-pcie", "h100-sxm");
        // Dense peaks, never the 2:4-sparsity figures.
        assertThat(e.catalog().gpu("b200").orElseThrow().bf16Tflops()).isEqualTo(2250.0);
        assertThat(e.catalog().gpu("h20").orElseThrow().bf16Tflops()).isEqualTo(148.0);
    }

    /** Stable Diffusion 3's MMDiT: joint (double-stream) blocks only, no single-stream blocks. */
    static final String JOINT_ONLY_MMDIT = """
            {"id": "my-mmdit", "family": "sd3", "architecture": "mmdit", "depth": 24, "single_depth": %d,
             "hidden": 1536, "heads": 24, "patch": 2, "mlp_ratio": 4.0, "latent_channels": 16, "latent_downsample": 8,
             "vae": "sdxl-vae", "text_encoder": "t5-xxl", "text_tokens": 154, "caption_channels": 4096,
             "vector_channels": 2048,
             "defaults": {"resolution": 256, "precision": "bf16", "features": "precomputed", "attention": "flash"}}""";

    @Test
    void anMmditOfJointBlocksOnlyIsPricedAndANegativeSingleDepthIsRefused() throws IOException {
        Path file = write("sd3.json", "{\"models\": [" + JOINT_ONLY_MMDIT.formatted(0) + "]}");
        Estimator estimator = Estimator.withUserCatalogs(List.of(file));
        // Its defaults name no optimizer: one clear line, not a NullPointerException.
        assertThatThrownBy(() -> estimator.estimate(new RunSpec("my-mmdit", "a100-80gb", 1, 16, null, null, null, null,
                null, null, null, null, null, null, null, null, null))).isInstanceOf(InvalidSpecException.class)
                .hasMessageStartingWith("no optimizer given; choose one of adamw");
        Estimate e = estimator.estimate(new RunSpec("my-mmdit", "a100-80gb", 1, 16, null, null, null, null, null, "adamw",
                null, null, null, null, null, null, null));
        // 24 joint blocks of two 18h^2 streams: about 2.04 B parameters, and a finite step (no empty block group).
        assertThat(e.params()).isBetween(2_000_000_000L, 2_100_000_000L);
        assertThat(e.stepSeconds()).isFinite().isPositive();
        assertThat(e.stepOperations().values()).allSatisfy(v -> assertThat(v).isFinite());
        Path negative = write("bad.json", "{\"models\": [" + JOINT_ONLY_MMDIT.formatted(-1) + "]}");
        assertThatThrownBy(() -> Estimator.withUserCatalogs(List.of(negative))).isInstanceOf(CatalogException.class)
                .hasMessageContaining("single_depth must be 0 or more, got -1");
    }
}
