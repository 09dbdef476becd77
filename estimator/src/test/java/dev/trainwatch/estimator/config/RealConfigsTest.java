package dev.trainwatch.estimator.config;

import static dev.trainwatch.estimator.config.ConfigReadersTest.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The training configs of the real repositories (faithful copies under src/test/resources/configs, each with the
 * repository, commit and path it came from on its first line) resolve to what their training scripts do.
 */
class RealConfigsTest {

    private final Estimator estimator = Estimator.bundled();

    private static final String ALPHA = "pixart-alpha/configs/pixart_config/";

    @ParameterizedTest
    @ValueSource(strings = {"PixArt_xl2_img1024_internal.py", "PixArt_xl2_img1024_internalms.py",
            "PixArt_xl2_img1024_lcm.py", "PixArt_xl2_img256_SAM.py", "PixArt_xl2_img256_internal.py",
            "PixArt_xl2_img512_internal.py", "PixArt_xl2_img512_internalms.py"})
    void everyPixArtAlphaConfigTrainsOnPrecomputedT5FeaturesWithAnEma(String file) {
        ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture(ALPHA + file));
        RunSpec spec = read.spec();
        assertThat(spec.model()).isEqualTo("pixart-alpha-xl-2");
        // train.py never loads T5; load_vae_feat=True in every released config: nothing runs online.
        assertThat(spec.textFeatures()).isEqualTo("precomputed");
        assertThat(spec.vaeFeatures()).isEqualTo("precomputed");
        assertThat(spec.features()).isEqualTo("precomputed");
        assertThat(spec.ema()).isTrue();
        Estimate e = estimator.estimate(spec.overriddenBy(new RunSpec(null, "a100-80gb", null, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null)));
        assertThat(e.breakdown()).doesNotContainKey("frozen_encoders");
        assertThat(e.breakdown()).containsKey("ema");
    }

    @Test
    void pixartAlpha1024ResolvesToAboutHalfWhatOnlineFeaturesCost() {
        ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture(ALPHA + "PixArt_xl2_img1024_internal.py"));
        RunSpec spec = read.spec();
        assertThat(spec.resolution()).isEqualTo(1024);
        assertThat(spec.batch()).isEqualTo(2);
        assertThat(spec.precision()).isEqualTo("fp16");
        assertThat(spec.gradCheckpointing()).isTrue();
        RunSpec onA100 = spec.overriddenBy(new RunSpec(null, "a100-80gb", null, null, null, null, null, null, null,
                null, null, null, null, null, null, null, null));
        Estimate asRead = estimator.estimate(onA100);
        Estimate online = estimator.estimate(onA100.overriddenBy(new RunSpec(null, null, null, null, null, null, null,
                null, null, null, null, null, "online", null, null, null, null)));
        assertThat((double) asRead.peakMemoryBytes()).isLessThan(0.7 * online.peakMemoryBytes());
        assertThat(read.notes()).noneMatch(n -> n.contains("load_vae_feat is not set"));
    }

    @Test
    void pixartAlphaWithTheVaeOnlineRunsOnlyTheVae() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("alpha");
        java.nio.file.Files.copy(fixture("pixart-alpha/configs/PixArt_xl2_internal.py"), dir.resolve("PixArt_xl2_internal.py"));
        java.nio.file.Path child = dir.resolve("child.py");
        java.nio.file.Files.writeString(child, "_base_ = ['PixArt_xl2_internal.py']\n"
                + "data = dict(load_vae_feat=False, load_t5_feat=False)\nfp32_attention = True\n");
        ConfigReaders.Read read = BundledConfigs.readWithNotes(child);
        assertThat(read.spec().textFeatures()).isEqualTo("precomputed");
        assertThat(read.spec().vaeFeatures()).isEqualTo("online");
        assertThat(read.notes()).anyMatch(n -> n.startsWith("data.load_t5_feat is not read by PixArt-alpha's train.py"));
    }

    @Test
    void pixartSigmaConfigsKeepTheirOnlineEncodersAndNoEma() {
        for (String file : List.of("PixArt_sigma_xl2_img1024_internalms.py", "PixArt_sigma_xl2_img512_internalms.py",
                "PixArt_sigma_xl2_img256_internal.py", "PixArt_sigma_xl2_img1024_internalms_kvcompress.py")) {
            ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture("pixart-sigma/configs/pixart_sigma_config/" + file));
            assertThat(read.spec().model()).as(file).isEqualTo("pixart-sigma-xl-2");
            assertThat(read.spec().ema()).as(file).isFalse();
            assertThat(read.spec().optimizer()).as(file).isEqualTo("came");
            assertThat(read.spec().features()).as(file).isEqualTo("online");
        }
        ConfigReaders.Read kv = BundledConfigs.readWithNotes(fixture(
                "pixart-sigma/configs/pixart_sigma_config/PixArt_sigma_xl2_img1024_internalms_kvcompress.py"));
        assertThat(kv.notes()).anyMatch(n -> n.startsWith("kv_compress"));
    }

    @Test
    void sanaKeepsAnEmaOnlyWhenItsConfigAsksForTheUpdate() throws Exception {
        ConfigReaders.Read plain = BundledConfigs.readWithNotes(fixture("sana/configs/sana_config/1024ms/Sana_1600M_img1024.yaml"));
        assertThat(plain.spec().ema()).isNull(); // the model's recipe: no EMA
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("sana");
        java.nio.file.Files.copy(fixture("sana/configs/sana_config/1024ms/Sana_1600M_img1024.yaml"), dir.resolve("base.yaml"));
        java.nio.file.Path child = dir.resolve("ema.yaml");
        java.nio.file.Files.writeString(child, "_base_: [base.yaml]\ntrain:\n  ema_update: true\ndata:\n  load_text_feat: true\n");
        RunSpec spec = BundledConfigs.read(child);
        assertThat(spec.ema()).isTrue();
        // Gemma features from disk, the DC-AE still online.
        assertThat(spec.textFeatures()).isEqualTo("precomputed");
        assertThat(spec.vaeFeatures()).isEqualTo("online");
    }

    @Test
    void openSora12Stage1IsZero2MixedPrecisionOverItsBuckets() {
        ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture("opensora/configs/opensora-v1-2/train/stage1.py"));
        RunSpec spec = read.spec();
        assertThat(spec.model()).isEqualTo("opensora-1.2");
        assertThat(spec.precision()).isEqualTo("bf16");
        assertThat(spec.weights()).isEqualTo("mixed");
        assertThat(spec.zero()).isEqualTo(2);
        assertThat(spec.gradCheckpointing()).isTrue();
        assertThat(spec.ema()).isTrue();
        assertThat(spec.features()).isEqualTo("online");
        assertThat(spec.vaeMicroBatch()).isEqualTo(4);
        // 144p: 5 frame buckets, 256/240p/360p: 5 each, then 512, 480p, 720p, 1024, 1080p, 2048 at one frame.
        assertThat(spec.buckets()).hasSize(26);
        assertThat(spec.buckets()).contains(new RunSpec.Bucket(192, 192, 1, 475, 1.0));
        assertThat(read.notes()).anyMatch(n -> n.startsWith("bucket_config: 26 frames x resolution buckets"));
        assertThat(read.notes()).anyMatch(n -> n.startsWith("vae micro_frame_size 17"));
        Estimate e = estimator.estimate(spec.overriddenBy(new RunSpec(null, "h100-sxm", 8, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null)));
        assertThat(e.breakdown()).containsKey("master_weights");
        assertThat(e.notes().get(0)).startsWith("26 buckets priced; largest memory first:");
    }

    @Test
    void openSora20CheckpointsTheFirstEightDoubleAndAllSingleStreamBlocks() {
        ConfigReaders.Read read = BundledConfigs.readWithNotes(fixture("opensora/configs/diffusion/train/stage1.py"));
        RunSpec spec = read.spec();
        assertThat(spec.model()).isEqualTo("opensora-2.0");
        assertThat(spec.checkpointBlocks()).containsExactly(8, 100);
        assertThat(spec.optimizer()).isEqualTo("adamw");
        assertThat(spec.ema()).isFalse(); // ema_decay = None
        assertThat(spec.zero()).isEqualTo(2);
        // _delete_ replaces the image config's buckets: 33 frame counts at 256px plus 768px and 1024px images.
        assertThat(spec.buckets()).hasSize(35);
        assertThat(read.notes()).anyMatch(n -> n.contains("the first 8 double-stream blocks and the first 100 single-stream blocks (at most 38)"));
        assertThat(read.notes()).anyMatch(n -> n.startsWith("the CLIP text encoder"));
        Estimate e = estimator.estimate(spec.overriddenBy(new RunSpec(null, "h100-sxm", 8, null, null, null, null,
                null, null, null, null, null, null, null, null, null, null)));
        assertThat(e.spec().checkpointBlocks()).containsExactly(8, 38);
        ConfigReaders.Read image = BundledConfigs.readWithNotes(fixture("opensora/configs/diffusion/train/image.py"));
        assertThat(image.spec().buckets()).hasSize(3);
    }
}
