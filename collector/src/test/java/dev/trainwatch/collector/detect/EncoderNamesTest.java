package dev.trainwatch.collector.detect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.estimator.Estimate;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.RunSpec;
import org.junit.jupiter.api.Test;

/**
 * Fix texts name the model's own encoders, as the estimator does (issue 20: a Sana alert said "precompute the T5",
 * Sana encodes text with Gemma; a DiT failure advised T5/VAE precompute, DiT has no text encoder).
 */
class EncoderNamesTest {

    private static Estimate estimate(String model, String features) {
        return Estimator.bundled().estimate(new RunSpec(model, "a100-80gb", 1, 4, 512, null, null, null, "bf16", null,
                null, null, features, null, null, null, null));
    }

    @Test
    void eachModelsOwnEncodersAreNamed() {
        assertThat(Texts.encoders(estimate("pixart-sigma-xl-2", "online"))).hasValueSatisfying(w ->
                assertThat(w).contains("T5").contains("VAE"));
        assertThat(Texts.encoders(estimate("sana-1600m", "online"))).hasValueSatisfying(w ->
                assertThat(w).containsIgnoringCase("gemma").doesNotContain("T5"));
        assertThat(Texts.encoders(estimate("dit-xl-2", "online"))).hasValue("VAE");
        assertThat(Texts.encoders(estimate("dit-xl-2", "precomputed"))).isEmpty();
    }
}
