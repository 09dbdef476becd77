package dev.trainwatch.estimator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The DiT models that kohya, musubi-tuner, ai-toolkit, SimpleTuner, OneTrainer, diffusion-pipe and finetrainers train:
 * each id is in the catalog, its parameters derived from the architecture land on the published count (the table with
 * sources is in docs/ESTIMATOR.md), and a spec naming it is priced.
 */
@Timeout(30)
class TrainerModelsTest {

    static final List<String> IDS = List.of("flux.1-dev", "flux.1-schnell", "sd3.5-medium", "sd3.5-large",
            "wan2.1-t2v-1.3b", "wan2.1-t2v-14b", "wan2.2-t2v-a14b", "hunyuanvideo", "qwen-image", "cogvideox-2b",
            "cogvideox-5b", "ltx-video", "z-image-turbo");

    private final Estimator estimator = Estimator.bundled();

    @Test
    void everyModelIsWithinOnePercentOfItsPublishedCount() {
        for (String id : IDS) {
            ModelInfo model = estimator.catalog().model(id).orElseThrow();
            double derived = estimator.params(id);
            assertThat(derived / model.publishedParams())
                    .as(id + " derived " + (long) derived + " vs published " + model.publishedText())
                    .isCloseTo(1.0, within(0.01));
        }
    }

    @Test
    void countsPrintedByTheirCheckpointsAreMetExactly() {
        // Where the published figure is a whole count (a checkpoint's tensors summed), the derivation meets it to the
        // parameter: these pin every block's layout, not only its width.
        assertThat(estimator.params("flux.1-dev")).isEqualTo(11_901_408_320L);
        assertThat(estimator.params("flux.1-schnell")).isEqualTo(11_891_178_560L);
        assertThat(estimator.params("sd3.5-medium")).isEqualTo(2_469_663_936L);
        assertThat(estimator.params("wan2.1-t2v-1.3b")).isEqualTo(1_418_996_800L);
        assertThat(estimator.params("wan2.1-t2v-14b")).isEqualTo(14_288_491_584L);
        assertThat(estimator.params("wan2.2-t2v-a14b")).isEqualTo(14_288_491_584L);
        assertThat(estimator.params("hunyuanvideo")).isEqualTo(12_821_012_544L);
        assertThat(estimator.params("qwen-image")).isEqualTo(20_430_401_088L);
        assertThat(estimator.params("cogvideox-2b")).isEqualTo(1_693_783_872L);
        assertThat(estimator.params("cogvideox-5b")).isEqualTo(5_570_283_072L);
        assertThat(estimator.params("ltx-video")).isEqualTo(1_923_385_472L);
    }

    @Test
    void loraAdaptersCountAsTheTrainersPrintThem() {
        // finetrainers docs/models/cogvideox.md: rank 128 on to_q, to_k, to_v, to_out.0 prints 132,120,576 trainable.
        var spec = Specs.simple("cogvideox-5b", "h100-sxm", 1).withPhysics(null, null, 128, List.of("attention"), null,
                null);
        assertThat(estimator.estimate(spec).trainableParams()).isEqualTo(132_120_576L);
    }

    @Test
    void aliasesAndTheUnknownModelMessage() {
        assertThat(estimator.catalog().model("flux-dev").orElseThrow().id()).isEqualTo("flux.1-dev");
        assertThat(estimator.catalog().model("FLUX1-Schnell").orElseThrow().id()).isEqualTo("flux.1-schnell");
        assertThat(estimator.catalog().model("wan2.1-14b").orElseThrow().id()).isEqualTo("wan2.1-t2v-14b");
        assertThatThrownBy(() -> estimator.estimate(Specs.simple("flux.2-dev", "rtx4090", 1)))
                .hasMessageContaining("unknown model 'flux.2-dev'").hasMessageContaining("--catalog");
    }

    @Test
    void everyModelIsPricedAtItsRecipeDefaults() {
        for (String id : IDS) {
            Estimate e = estimator.estimate(Specs.simple(id, "h100-sxm", 1));
            assertThat(e.peakMemoryBytes()).as(id).isPositive();
            assertThat(e.stepSeconds()).as(id).isPositive();
        }
    }
}
