package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a user who mistypes gets: one line that says what is wrong and what was probably meant. */
class CommandLineMistakesTest {

    @TempDir
    Path dir;

    record Result(int status, String out, String err) {
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = TrainwatchCommand.newCommandLine(new PrintWriter(out), new PrintWriter(err)).execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    @Test
    void everyUrlOptionReadsItsSchemeInAnyCaseAndSaysTheSameWhenItIsNotHttp() {
        assertThat(CollectorOptions.url("--collector", " HTTPS://Node-7:9477/ "))
                .hasToString("https://Node-7:9477/");
        assertThat(CollectorOptions.url("--webhook", "http://hooks.example/x?a=1"))
                .hasToString("http://hooks.example/x?a=1");
        assertThat(CollectorOptions.url("--webhook", null)).isNull();
        for (String bad : List.of("ftp://x", "127.0.0.1:9477", "node-7:9477", "http:///path", "http://a b")) {
            assertThatThrownBy(() -> CollectorOptions.url("--x", bad)).isInstanceOf(UserError.class)
                    .hasMessage("--x wants an http(s) URL such as http://HOST:PORT, got '" + bad + "'");
        }
        // each option through its command, so one that stopped using the parser fails here
        for (List<String> args : List.of(List.of("agent", "--collector"), List.of("collector", "--alertmanager"),
                List.of("collector", "--webhook"), List.of("collector", "--external-url"))) {
            Result r = run(args.get(0), args.get(1), "10.0.0.5:9093");
            assertThat(r.status()).as(args.toString()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err().strip()).isEqualTo("trainwatch: " + args.get(1)
                    + " wants an http(s) URL such as http://HOST:PORT, got '10.0.0.5:9093'");
        }
    }

    @Test
    void anAmbiguousGpuIsExplainedWithAnExampleOfThoseCards() {
        Result r = run("estimate", "--model", "dit-xl-2", "--gpu", "h100");
        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err().strip()).doesNotContain("\n").contains("h100-nvl, h100-pcie, h100-sxm")
                .contains("e.g. \"NVIDIA H100").doesNotContain("A100");
    }

    @Test
    void aMistypedLogFormatPresetIsNamedWithTheClosestPreset() {
        for (String command : List.of("run", "watch")) {
            List<String> args = command.equals("run") ? List.of("run", "--log-format", "dti", "--", "true")
                    : List.of("watch", "--log-format", "dti", "--log", dir.resolve("log.txt").toString());
            Result r = run(args.toArray(String[]::new));
            assertThat(r.status()).as(command).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err().strip()).as(command).doesNotContain("\n")
                    .startsWith("trainwatch: --log-format: unknown preset 'dti'; did you mean dit?")
                    .doesNotContain("named group");
        }
        Result agent = run("agent", "--collector", "http://127.0.0.1:9", "--log", dir.resolve("log.txt").toString(),
                "--log-format", "accelerat");
        assertThat(agent.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(agent.err().strip()).contains("unknown preset 'accelerat'; did you mean accelerate?");
        // A real regular expression is still one; a broken one is said in one line.
        Result regex = run("run", "--log-format", "step (\\d+", "--", "true");
        assertThat(regex.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(regex.err().strip()).startsWith("trainwatch: --log-format: ").doesNotContain("\n");
    }

    @Test
    void anUnknownCommandOrOptionGetsTheClosestOne() {
        Result command = run("estimat");
        assertThat(command.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(command.err()).startsWith("trainwatch: unknown command 'estimat'; did you mean estimate?");
        Result option = run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--batch-size", "4");
        assertThat(option.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(option.err()).startsWith("trainwatch: unknown option '--batch-size'; did you mean --batch?");
        Result far = run("frobnicate");
        assertThat(far.err()).startsWith("trainwatch: unknown command 'frobnicate'\n");
    }

    @Test
    void aBrokenCatalogIsOneLineWithoutJacksonInternals() throws Exception {
        String[] broken = {"{\"models\": [ {\"id\": \"x\",, }", "{\"models\": [", "{\"models\": [{\"id\": \"x\", \"depth\": \"deep\"}]}",
                "{\"models\": [{\"id\": \"x\", \"depth\": [1]}]}"};
        for (String json : broken) {
            Path catalog = dir.resolve("catalog.json");
            Files.writeString(catalog, json);
            Result r = run("estimate", "--catalog", catalog.toString(), "--model", "dit-xl-2", "--gpu", "a100-80gb");
            assertThat(r.status()).as(json).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err().strip()).as(json).startsWith("trainwatch: catalog " + catalog).doesNotContain("\n")
                    .doesNotContain("[Source").doesNotContain("(code").doesNotContain("`").doesNotContain("JsonToken")
                    .doesNotContain("java.").doesNotContain("StreamReadFeature");
        }
        Files.writeString(dir.resolve("catalog.json"), broken[2]);
        assertThat(run("estimate", "--catalog", dir.resolve("catalog.json").toString(), "--model", "dit-xl-2", "--gpu",
                "a100-80gb").err()).contains("'depth' should be a whole number, not \"deep\"");
    }

    @Test
    void suggestionsAreCloseNamesOnly() {
        assertThat(Suggestions.closest("estimat", List.of("estimate", "models", "gpus"), 2)).containsExactly("estimate");
        assertThat(Suggestions.closest("--batch-size", List.of("--batch", "--gpus", "--model"), 2))
                .containsExactly("--batch");
        assertThat(Suggestions.closest("dti", List.of("auto", "pixart", "sana", "dit", "opensora"), 2))
                .containsExactly("dit");
        assertThat(Suggestions.closest("frobnicate", List.of("estimate", "models", "gpus"), 2)).isEmpty();
    }

    @Test
    void anEmptyOrSeveralPidsForAttachSayWhatToDo() {
        for (String command : List.of("watch", "agent")) {
            List<String> args = new ArrayList<>(List.of(command, "--attach", ""));
            if (command.equals("agent")) {
                args.addAll(List.of("--collector", "http://127.0.0.1:9"));
            }
            Result empty = run(args.toArray(String[]::new));
            assertThat(empty.status()).as(command).isEqualTo(ExitCodes.USAGE);
            assertThat(empty.err()).as(command).contains("no PID given").contains("leave --attach out")
                    .doesNotContain("is not a long");
        }
        Result several = run("watch", "--attach", "4242\n4243");
        assertThat(several.err()).contains("is several PIDs").contains("pgrep -o");
        Result word = run("watch", "--attach", "train.py");
        assertThat(word.err()).contains("'train.py' is not a process id");
    }

    @Test
    void aTrainingCommandWithoutDashesIsToldToUseThem() {
        Result r = run("run", "python3", "-c", "print(1)");
        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err().lines().findFirst().orElseThrow())
                .isEqualTo("trainwatch: '-c' is not an option of trainwatch run: put the training command after --, as in"
                        + " trainwatch run [options] -- python3 -c print(1)");
        assertThat(r.err()).doesNotContain("did you mean -V");
        // A near miss of run's own option is still named as such.
        Result typo = run("run", "--log-fromat", "dit", "--", "true");
        assertThat(typo.err()).contains("unknown option '--log-fromat' of trainwatch run; did you mean --log-format?");
    }

    @Test
    void anEstimateWithoutABatchSaysWhichItPriced() {
        Result r = run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("no --batch given: priced at batch 1 per GPU; pass --batch N for yours");
        Result given = run("estimate", "--model", "dit-xl-2", "--gpu", "a100-80gb", "--batch", "4");
        assertThat(given.out()).doesNotContain("no --batch given");
    }
}
