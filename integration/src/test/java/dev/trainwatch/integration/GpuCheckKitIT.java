package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.agent.nvml.FakeNvml;
import dev.trainwatch.protocol.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GPU check's kit end to end on the CPU (issue #42; docs/GPU-CHECK.md): {@code bench/gpu/pack} builds the jlink
 * runtime and the agent's jar, {@code bench/gpu/device-check} (the call the docs give, plus {@code --tiny}) runs the
 * packed agent's one-shot sample and Debian's PyTorch training the catalog's architectures at tiny sizes with the
 * agent attached to it, the fake NVML standing in for the GPU and no collector listening, and {@code bench/gpu/judge}
 * replays the spool into a real collector and writes the report. Without python3-torch it fails, as CI installs it.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class GpuCheckKitIT {

    private static final long GPU_MACHINE_TREE_BYTES = 64L << 20;
    private static final long RETURNED_FILE_BYTES = 16L << 20;
    private static final int RETURNED_FILES = 8;
    private static final int CALL_CHARACTERS = 2000;
    /** One row of each architecture (DiT, PixArt, Sana, STDiT, STDiT3, MMDiT) and half weights: the CPU's share. */
    private static final String TINY_ROWS = "01,02,06,07,08,09,10";

    @Test
    void packThenDeviceCheckThenJudgeWriteMeasuredRowsAndAJudgedReport(@TempDir Path tmp) throws IOException {
        TorchJob.requireTorch();
        Path root = ProjectFiles.root();
        Path kit = tmp.resolve("kit");
        ExternalCommand.Result pack = ExternalCommand.run(Duration.ofMinutes(4), root,
                List.of("bench/gpu/pack", kit.toString()));
        assertThat(pack.exitCode()).as(pack.output()).isZero();
        Properties packed = new Properties();
        try (var in = Files.newInputStream(kit.resolve("pack.properties"))) {
            packed.load(in);
        }
        long kitBytes = treeBytes(kit);
        assertThat(Long.parseLong(packed.getProperty("kit_bytes")))
                .isEqualTo(kitBytes - Files.size(kit.resolve("pack.properties")));
        assertThat(kitBytes + Long.parseLong(packed.getProperty("tree_bytes"))).isLessThan(GPU_MACHINE_TREE_BYTES);
        assertThat(Double.parseDouble(packed.getProperty("planned_seconds"))).isBetween(60.0, 480.0);

        String call = documentedDeviceCall();
        assertThat(call.length()).isLessThan(CALL_CHARACTERS);
        Path out = tmp.resolve("out");
        List<String> command = new ArrayList<>(List.of(call.split(" ")));
        command.addAll(List.of("--tiny", "--budget-s", "150"));
        ExternalCommand.Result check = ExternalCommand.run(Duration.ofMinutes(4), root, command, Map.of(
                "OUT", out.toString(), "KIT", kit.toString(), "PYTHON", TorchJob.PYTHON.toString(),
                "PROBE_ONLY", TINY_ROWS, "TRAINWATCH_NVML_LIBRARY", FakeNvml.library().toString(),
                FakeNvml.SCENARIO_ENV, root.resolve("bench/gpu/fake-h100.scenario").toString(),
                FakeNvml.CLOCK_ENV, "wall"));
        assertThat(check.exitCode()).as(check.output()).isZero();
        assertReturnedFiles(out);
        JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
        assertThat(summary.path("probe_exit").asText()).as(check.output()).isEqualTo("0");
        assertThat(summary.path("once_exit").asText()).isEqualTo("0");
        assertThat(summary.path("spool_entries").asInt()).isPositive();
        assertThat(Json.MAPPER.readTree(out.resolve("sample.json").toFile()).get(0).path("name").asText())
                .isEqualTo("NVIDIA H100 80GB HBM3");
        assertThat(measuredSteps(out.resolve("rows.tsv"))).hasSize(TINY_ROWS.split(",").length)
                .allSatisfy(seconds -> assertThat(seconds).isPositive());

        Path report = tmp.resolve("report");
        ExternalCommand.Result judge = ExternalCommand.run(Duration.ofMinutes(3), root,
                List.of("bench/gpu/judge", out.toString(), report.toString()));
        assertThat(judge.exitCode()).as(judge.output()).isZero();
        assertJudged(Json.MAPPER.readTree(report.resolve("report.json").toFile()), summary);
        assertThat(Files.readString(report.resolve("report.md"))).contains("| steps read from the log | pass |");
    }

    private static void assertJudged(JsonNode report, JsonNode summary) {
        JsonNode collector = report.path("collector");
        assertThat(collector.path("found").asBoolean()).as(collector.toString()).isTrue();
        assertThat(collector.path("anomalies").size()).as(collector.toString()).isZero();
        int steps = 0;
        for (JsonNode row : report.path("rows")) {
            steps += row.has("measured_step_s") ? 4 : 0; // --tiny: 1 warm-up and 3 timed steps a row
            assertThat(row.path("estimate").path("step_seconds").asDouble()).as(row.toString()).isPositive();
        }
        assertThat(steps).isEqualTo(4 * TINY_ROWS.split(",").length);
        assertThat(collector.path("observed").path("last_step").asInt()).isEqualTo(steps);
        JsonNode readings = report.path("readings");
        assertThat(readings.path("attributed_pids").toString()).contains(summary.path("probe_pid").asText());
        assertThat(readings.path("probe_process_memory_bytes").path("max").asLong()).isEqualTo(23_085_449_216L);
        assertThat(readings.path("power_watts").path("median").asDouble()).isEqualTo(612.0);
        for (JsonNode check : report.path("checks")) {
            assertThat(check.get(1).asBoolean()).as(check.toString()).isTrue();
        }
    }

    /** What a GPU machine sends back: at most 8 plain files of at most 16 MiB. */
    private static void assertReturnedFiles(Path out) throws IOException {
        try (Stream<Path> files = Files.list(out)) {
            List<Path> all = files.toList();
            assertThat(all).hasSizeLessThanOrEqualTo(RETURNED_FILES).allSatisfy(f -> {
                assertThat(f).isRegularFile();
                assertThat(Files.size(f)).isLessThanOrEqualTo(RETURNED_FILE_BYTES);
            });
            assertThat(all.stream().map(f -> f.getFileName().toString())).contains("rows.tsv", "rows.jsonl",
                    "sample.json", "spool.tar.gz", "logs.tar.gz", "summary.json");
        }
    }

    /** The seconds of each step row of rows.tsv (a tiny run's rows are of kind unpriced, unit s). */
    private static List<Double> measuredSteps(Path rows) throws IOException {
        List<Double> seconds = new ArrayList<>();
        for (String line : Files.readAllLines(rows)) {
            String[] cells = line.split("\t");
            if (!line.startsWith("#") && cells.length > 20 && "s".equals(cells[20])) {
                assertThat(cells[21]).isEqualTo("A");
                assertThat(cells[22]).startsWith("measured by this kit");
                seconds.add(Double.parseDouble(cells[19]));
            }
        }
        return seconds;
    }

    /** The device call docs/GPU-CHECK.md gives: its one-line code block that starts with bench/gpu/device-check. */
    private static String documentedDeviceCall() {
        Matcher m = Pattern.compile("```sh\\n(bench/gpu/device-check[^\\n]*)\\n```")
                .matcher(ProjectFiles.read(ProjectFiles.docs("GPU-CHECK.md")));
        assertThat(m.find()).as("docs/GPU-CHECK.md gives the device call in a ```sh block").isTrue();
        return m.group(1).strip();
    }

    private static long treeBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            // Links (the runtime's legal notices point into the JDK's) are copied as links: their targets do not travel.
            return files.filter(f -> Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)).mapToLong(f -> {
                try {
                    return Files.size(f);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }).sum();
        }
    }
}
