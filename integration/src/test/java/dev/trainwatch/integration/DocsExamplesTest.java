package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

/**
 * The docs show what the product does now: API.md's PUT example is what a collector answers today (regenerate with
 * {@code docs/regenerate}), and the README's picture is the generator's screenshot of the page.
 */
class DocsExamplesTest {

    @Test
    void apiMdsPutExampleIsWhatTheCollectorAnswersToday() throws Exception {
        String apiMd = ProjectFiles.read(ProjectFiles.docs("API.md"));
        assertThat(DocsFigures.currentPutExample(apiMd)).as("API.md's generated PUT example; run docs/regenerate")
                .isEqualTo(DocsFigures.putRunExample());
        // The curl line above it sends the spec the example was made with.
        for (var field : DocsFigures.PUT_SPEC.entrySet()) {
            Object v = field.getValue();
            String json = "\"" + field.getKey() + "\":" + (v instanceof String ? "\"" + v + "\"" : String.valueOf(v));
            assertThat(apiMd).as("the PUT curl example sends " + json).contains(json);
        }
    }

    @Test
    void theReadmePictureIsTheGeneratorsScreenshotOfThePage() throws Exception {
        assertThat(ProjectFiles.read(ProjectFiles.root().resolve("README.md"))).contains("](docs/images/page.png)");
        Path picture = ProjectFiles.docs("images").resolve("page.png");
        BufferedImage image = ImageIO.read(picture.toFile());
        assertThat(image).as("docs/images/page.png is a PNG").isNotNull();
        assertThat(image.getWidth()).isEqualTo(DocsFigures.WIDTH);
        assertThat(image.getHeight()).isEqualTo(DocsFigures.HEIGHT);
    }
}
