package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.trainwatch.cli.TrainwatchCommand;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

/**
 * The docs show what the product does now: API.md's PUT example is what a collector answers today (regenerate with
 * {@code docs/regenerate}), the README's picture is the generator's screenshot of the page, and the README's
 * {@code $ ./trainwatch estimate …} examples print what the README shows (each line it shows, "…" for the rest).
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

    /** One {@code $ ./trainwatch …} example: the command's words and the lines the README shows it print. */
    record Example(List<String> args, List<String> shown) {
    }

    @Test
    void theReadmesEstimateExamplesPrintWhatTheReadmeShows() throws Exception {
        List<Example> examples = examples(ProjectFiles.read(ProjectFiles.root().resolve("README.md")));
        assertThat(examples).as("the README's estimate examples").hasSizeGreaterThanOrEqualTo(2);
        for (Example example : examples) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int status = TrainwatchCommand.newCommandLine(new PrintWriter(out), new PrintWriter(err))
                    .execute(example.args().toArray(String[]::new));
            assertThat(status).as(String.join(" ", example.args()) + ": " + err).isZero();
            List<String> printed = out.toString().lines().map(String::stripTrailing).toList();
            for (String line : example.shown()) {
                assertThat(printed).as("README shows, after $ ./trainwatch " + String.join(" ", example.args()))
                        .contains(line);
            }
        }
    }

    /** The README's fenced {@code $ ./trainwatch estimate} examples; a config path is the test copy of that file. */
    static List<Example> examples(String readme) {
        List<Example> out = new ArrayList<>();
        List<String> lines = readme.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (!line.startsWith("$ ./trainwatch estimate ")) {
                continue;
            }
            String command = line.substring("$ ./trainwatch ".length());
            // A command continued over lines with a trailing backslash, as a shell reads it.
            while (command.endsWith("\\") && i + 1 < lines.size()) {
                command = command.substring(0, command.length() - 1) + " " + lines.get(++i).strip();
            }
            List<String> args = words(command);
            for (int k = 0; k + 1 < args.size(); k++) {
                if (args.get(k).equals("--config")) {
                    args.set(k + 1, testCopy(args.get(k + 1)).toString());
                }
            }
            List<String> shown = new ArrayList<>();
            for (int j = i + 1; j < lines.size() && !lines.get(j).startsWith("```"); j++) {
                String s = lines.get(j).stripTrailing();
                if (!s.isBlank() && !s.strip().equals("…")) {
                    shown.add(s);
                }
            }
            out.add(new Example(args, shown));
        }
        return out;
    }

    /** Shell words: spaces split, double quotes group. */
    static List<String> words(String command) {
        List<String> out = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (char c : command.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
                any = true;
            } else if (c == ' ' && !quoted) {
                if (any) {
                    out.add(word.toString());
                }
                word.setLength(0);
                any = false;
            } else {
                word.append(c);
                any = true;
            }
        }
        if (any) {
            out.add(word.toString());
        }
        return out;
    }

    /** A training repository's config path ("configs/sana_config/…") as the estimator's tests keep a copy of it. */
    static Path testCopy(String path) {
        Path configs = ProjectFiles.root().resolve("estimator/src/test/resources/configs");
        try (Stream<Path> files = Files.walk(configs)) {
            return files.filter(f -> f.toString().replace('\\', '/').endsWith("/" + path)).findFirst()
                    .orElseThrow(() -> new AssertionError("no test copy of " + path + " under " + configs));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
