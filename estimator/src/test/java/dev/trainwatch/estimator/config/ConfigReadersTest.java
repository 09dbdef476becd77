package dev.trainwatch.estimator.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigReadersTest {

    @TempDir
    Path dir;

    static Path fixture(String relative) {
        try {
            return Path.of(ConfigReadersTest.class.getResource("/configs/" + relative).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static final String SIGMA = "pixart-sigma/configs/pixart_sigma_config/PixArt_sigma_xl2_img1024_internalms.py";
    static final String SANA = "sana/configs/sana_config/1024ms/Sana_1600M_img1024.yaml";

    @Test
    void readsThePixArtSigma1024ConfigThroughItsBase() {
        RunSpec spec = BundledConfigs.read(fixture(SIGMA));
        assertThat(spec.model()).isEqualTo("pixart-sigma-xl-2");
        assertThat(spec.resolution()).isEqualTo(1024);
        assertThat(spec.batch()).isEqualTo(2);
        assertThat(spec.precision()).isEqualTo("fp16");
        assertThat(spec.gradCheckpointing()).isTrue();
        assertThat(spec.optimizer()).isEqualTo("came");
        // The child's data dict overrides the base's load_*_feat=True.
        assertThat(spec.features()).isEqualTo("online");
        assertThat(spec.zero()).isNull();
        assertThat(spec.gradAccumulation()).isEqualTo(1);
    }

    @Test
    void theBaseAloneIsPixArtAlphaAt256WithPrecomputedFeatures() {
        RunSpec spec = BundledConfigs.read(fixture("pixart-sigma/configs/PixArt_xl2_internal.py"));
        assertThat(spec.model()).isEqualTo("pixart-alpha-xl-2");
        assertThat(spec.resolution()).isEqualTo(256);
        assertThat(spec.batch()).isEqualTo(32);
        assertThat(spec.optimizer()).isEqualTo("adamw");
        assertThat(spec.gradCheckpointing()).isFalse();
        assertThat(spec.features()).isEqualTo("precomputed");
    }

    @Test
    void readsTheSana1600mYaml() {
        RunSpec spec = BundledConfigs.read(fixture(SANA));
        assertThat(spec.model()).isEqualTo("sana-1600m");
        assertThat(spec.resolution()).isEqualTo(1024);
        assertThat(spec.batch()).isEqualTo(64);
        assertThat(spec.precision()).isEqualTo("fp16");
        assertThat(spec.optimizer()).isEqualTo("came");
        assertThat(spec.gradCheckpointing()).isTrue();
        assertThat(spec.features()).isEqualTo("online");
    }

    @Test
    void aConfigPlusAGpuIsAnEstimate() {
        RunSpec spec = BundledConfigs.read(fixture(SIGMA)).overriddenBy(new RunSpec(null, "a100-80gb", null, null, null,
                null, null, null, null, null, null, null, null, null, null, null, null));
        Estimate e = Estimator.bundled().estimate(spec);
        assertThat(e.model()).isEqualTo("pixart-sigma-xl-2");
        assertThat(e.fits()).isTrue();
    }

    @Test
    void mmcvFeatures(@TempDir Path tmp) throws IOException {
        Files.writeString(tmp.resolve("base.py"), """
                data = dict(type='X', load_vae_feat=True, load_t5_feat=True, nested=dict(a=1, b=2))
                image_size = 256
                optimizer = dict(type='AdamW', lr=1e-4)
                """);
        Files.writeString(tmp.resolve("child.py"), """
                _base_ = 'base.py'
                import os  # ignored
                size = 512
                image_size = size * 2 // 1  # arithmetic on earlier names
                model = \\
                    'PixArt_XL_2'
                model_max_length = 300
                train_batch_size = int(os.environ.get('BS', 4))  # opaque, but not needed... unless it is
                optimizer = dict(lr=2e-5)  # merged into the base dict: type stays AdamW
                data = dict(nested=dict(b=3))
                use_fsdp = True
                notes = '''multi
                line'''
                """);
        assertThatThrownBy(() -> BundledConfigs.read(tmp.resolve("child.py")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("child.py:8: train_batch_size should be a whole number, got a function call");
        Files.writeString(tmp.resolve("child.py"), Files.readString(tmp.resolve("child.py"))
                .replace("int(os.environ.get('BS', 4))", "4"));
        RunSpec spec = BundledConfigs.read(tmp.resolve("child.py"));
        assertThat(spec.resolution()).isEqualTo(1024);
        assertThat(spec.model()).isEqualTo("pixart-sigma-xl-2");
        assertThat(spec.optimizer()).isEqualTo("adamw");
        assertThat(spec.features()).isEqualTo("precomputed");
        assertThat(spec.zero()).isEqualTo(3);
        assertThat(spec.batch()).isEqualTo(4);
    }

    @Test
    void unparsableFilesNameTheFileTheLineAndWhy() throws IOException {
        Path unclosed = dir.resolve("unclosed.py");
        Files.writeString(unclosed, "model = 'PixArt_XL_2'\noptimizer = dict(type='AdamW',\n  lr=1e-4\n");
        assertThatThrownBy(() -> BundledConfigs.read(unclosed)).isInstanceOf(ConfigException.class)
                .hasMessage(unclosed + ":2: the bracket opened on this line is never closed")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));

        Path string = dir.resolve("string.py");
        Files.writeString(string, "a = 1\nmodel = 'PixArt_XL_2\n");
        assertThatThrownBy(() -> BundledConfigs.read(string)).hasMessage(string + ":2: unterminated string");

        Path statement = dir.resolve("statement.py");
        Files.writeString(statement, "a = 1\nif a:\n    b = 2\n");
        assertThatThrownBy(() -> BundledConfigs.read(statement)).hasMessage(statement + ":2: expected 'name = value', found 'if'");

        Path yaml = dir.resolve("bad.yaml");
        Files.writeString(yaml, "model:\n  model: SanaMS_1600M_P1_D20\n  image_size: [1024\ntrain: {}\n");
        assertThatThrownBy(() -> BundledConfigs.read(yaml)).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(yaml + ":").hasMessageContaining("not valid YAML");

        Path optimizer = dir.resolve("opt.yaml");
        Files.writeString(optimizer, "train:\n  optimizer:\n    type: Sophia\n");
        assertThatThrownBy(() -> BundledConfigs.read(optimizer)).hasMessageContaining("optimizer type 'Sophia'");

        assertThatThrownBy(() -> BundledConfigs.read(dir.resolve("missing.py"))).hasMessage(dir.resolve("missing.py") + ": no such file");
        assertThatThrownBy(() -> BundledConfigs.read(dir.resolve("x.cfg"))).hasMessageContaining("expected a PixArt or Open-Sora .py, a Sana or ai-toolkit .yaml, a kohya sd-scripts or musubi-tuner .toml, or a SimpleTuner or OneTrainer .json");
    }

    @Test
    void baseLoopsAreReported() throws IOException {
        Files.writeString(dir.resolve("a.py"), "_base_ = ['b.py']\n");
        Files.writeString(dir.resolve("b.py"), "_base_ = ['a.py']\n");
        assertThatThrownBy(() -> BundledConfigs.read(dir.resolve("a.py"))).hasMessageContaining("loops back");
    }

    @Test
    void unknownModelNamesAreReported() throws IOException {
        Path f = dir.resolve("m.py");
        Files.writeString(f, "\nmodel = 'UNet2D'\n");
        assertThatThrownBy(() -> BundledConfigs.read(f)).hasMessage(f + ":2: model 'UNet2D' is not in the catalog (see 'trainwatch models')");
    }
}
