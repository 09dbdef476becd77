package dev.trainwatch.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.catalog.GpuInfo;
import dev.trainwatch.protocol.Json;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code trainwatch gpus}: the GPU catalog (memory, bandwidth, dense peaks per dtype). */
@Command(name = "gpus", mixinStandardHelpOptions = true,
        description = "List the GPUs the estimator knows: memory, bandwidth and dense tensor peaks per dtype.")
final class GpusCommand implements Callable<Integer> {

    @Option(names = "--json", description = "Print a JSON array instead of the table.")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws JsonProcessingException {
        Estimator estimator = Estimator.bundled();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(Json.MAPPER.writeValueAsString(estimator.gpus()));
        } else {
            out.printf(Locale.ROOT, "%-15s %-24s %9s %9s %8s %8s %8s %8s  %s%n", "ID", "NAME", "MEMORY", "GB/s",
                    "FP16", "BF16", "TF32", "FP32", "NVML NAMES");
            for (GpuInfo g : estimator.gpus()) {
                out.printf(Locale.ROOT, "%-15s %-24s %5.1f GiB %9.0f %8s %8s %8s %8s  %s%n", g.id(), g.name(),
                        g.memoryBytes() / (double) (1L << 30), g.bandwidthGbps(), tflops(g.fp16Tflops()), tflops(g.bf16Tflops()),
                        tflops(g.tf32Tflops()), tflops(g.fp32Tflops()), String.join(", ", g.nvmlNames()));
            }
            out.println("TFLOPS are dense tensor peaks with FP32 accumulate (no 2:4 sparsity); '-' = not supported.");
        }
        out.flush();
        return ExitCodes.OK;
    }

    private static String tflops(Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%.1f", value);
    }
}
