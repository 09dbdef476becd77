package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.trainwatch.collector.CollectorServer;
import dev.trainwatch.protocol.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** User catalogs: --catalog, TRAINWATCH_CATALOG and the collector's DATA_DIR/catalog.json, without a rebuild. */
class CatalogOptionIT {

    @TempDir
    Path dir;

    static final String CATALOG = """
            {"gpus": [{"id": "lab-gpu", "name": "Lab GPU 64 GB", "architecture": "hopper", "memory_bytes": 68719476736,
                       "bandwidth_gbps": 3000, "fp16_tflops": 800, "bf16_tflops": 800, "tf32_tflops": 400,
                       "fp32_tflops": 60, "allreduce_gbps": 20, "efficiency": 0.35, "nvml_names": ["Lab GPU 64GB"]}],
             "models": [{"id": "lab-dit", "name": "Lab DiT-B/2", "family": "dit", "architecture": "dit", "depth": 12,
                         "hidden": 768, "heads": 12, "patch": 2, "mlp_ratio": 4.0, "latent_channels": 4,
                         "latent_downsample": 8, "learn_sigma": true, "num_classes": 1000, "pos_embed_resolution": 256,
                         "vae": "sd-vae", "defaults": {"resolution": 256, "precision": "bf16", "optimizer": "adamw",
                         "ema": true, "grad_checkpointing": false, "features": "precomputed", "attention": "flash"}}]}
            """;

    private Path catalog() throws Exception {
        Path file = dir.resolve("lab.json");
        Files.writeString(file, CATALOG);
        return file;
    }

    @Test
    void gpusAndModelsShowWhereEachEntryCameFrom() throws Exception {
        Path file = catalog();
        EstimateCommandTest.Result gpus = EstimateCommandTest.run("gpus", "--catalog", file.toString());
        assertThat(gpus.status()).isZero();
        assertThat(gpus.out().lines().filter(l -> l.startsWith("lab-gpu"))).singleElement().asString()
                .contains(file.toString()).contains("hopper");
        assertThat(gpus.out().lines().filter(l -> l.startsWith("a100-80gb"))).singleElement().asString().contains("bundled");
        JsonNode json = Json.MAPPER.readTree(EstimateCommandTest.run("gpus", "--json", "--catalog", file.toString()).out());
        assertThat(json.findValues("origin").stream().map(JsonNode::asText)).contains("bundled", file.toString());
        EstimateCommandTest.Result models = EstimateCommandTest.run("models", "--catalog", file.toString());
        assertThat(models.out().lines().filter(l -> l.startsWith("lab-dit"))).singleElement().asString()
                .contains(file.toString());
        assertThat(EstimateCommandTest.run("models").out()).doesNotContain("lab-dit");
    }

    @Test
    void estimatePricesAUserModelOnAUserGpu() throws Exception {
        EstimateCommandTest.Result r = EstimateCommandTest.run("estimate", "--catalog", catalog().toString(),
                "--model", "lab-dit", "--gpu", "Lab GPU 64GB", "--batch", "64");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("lab-dit on 1 x lab-gpu, batch 64 per GPU at 256 px").contains("of 64.00 GiB");
    }

    @Test
    void aWrongCatalogIsOneLineAndExitsWithUsage() throws Exception {
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, CATALOG.replace("\"efficiency\": 0.35", "\"efficiency\": 35"));
        for (String command : List.of("gpus", "models")) {
            EstimateCommandTest.Result r = EstimateCommandTest.run(command, "--catalog", bad.toString());
            assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err().strip()).isEqualTo("trainwatch: catalog " + bad
                    + ": GPU lab-gpu: efficiency is the share of the peak GEMMs reach, between 0 and 1 (leave it out for the"
                    + " architecture's); got 35.0");
        }
        EstimateCommandTest.Result dup = EstimateCommandTest.run("estimate", "--catalog", catalog().toString(),
                "--catalog", catalog().toString(), "--model", "lab-dit", "--gpu", "lab-gpu");
        assertThat(dup.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(dup.err().strip()).contains("GPU lab-gpu is already taken by GPU lab-gpu (" + dir.resolve("lab.json") + ")")
                .hasLineCount(1);
    }

    @Test
    void theEnvironmentNamesCatalogsWhenTheOptionDoesNot() throws Exception {
        Path file = catalog();
        CatalogOption option = new CatalogOption();
        assertThat(option.files(Map.of(CatalogOption.ENV, file + java.io.File.pathSeparator + "/x.json")))
                .containsExactly(file, Path.of("/x.json"));
        assertThat(option.files(Map.of())).isEmpty();
        try (TrainwatchProcess p = TrainwatchProcess.start(dir, Map.of(CatalogOption.ENV, file.toString()), "gpus")) {
            assertThat(p.waitFor(Duration.ofSeconds(60))).isZero();
            assertThat(p.stdout()).contains("lab-gpu").contains(file.toString());
        }
    }

    @Test
    void theCollectorReadsCatalogJsonInItsDataDirectory() throws Exception {
        Files.writeString(dir.resolve("catalog.json"), CATALOG);
        StringWriter err = new StringWriter();
        CommandLine cli = TrainwatchCommand.newCommandLine(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
        CollectorCommand command = (CollectorCommand) cli.getSubcommands().get("collector").getCommand();
        cli.parseArgs("collector", "--data-dir", dir.toString());
        var config = command.config();
        assertThat(config.userCatalogs()).containsExactly(dir.resolve("catalog.json"));
        assertThat(CollectorServer.estimator(config).catalog().resolveGpuId("lab-gpu")).contains("lab-gpu");
        // A wrong catalog.json stops the collector before it starts, in one line.
        Files.writeString(dir.resolve("catalog.json"), "{\"gpus\": [}");
        assertThat(cli.execute("collector", "--data-dir", dir.toString())).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString().strip()).startsWith("trainwatch: catalog " + dir.resolve("catalog.json")
                + ": not valid JSON at line 1").hasLineCount(1);
    }
}
