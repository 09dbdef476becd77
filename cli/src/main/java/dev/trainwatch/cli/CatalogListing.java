package dev.trainwatch.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.protocol.Json;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** What {@code gpus} and {@code models} share: a table of a catalog, or a JSON array of it with {@code --json}. */
abstract class CatalogListing implements Callable<Integer> {

    @Option(names = "--json", description = "Print a JSON array instead of the table.")
    boolean json;

    @Mixin
    CatalogOption catalog = new CatalogOption();

    @Spec
    CommandSpec spec;

    abstract List<Map<String, Object>> rows(Estimator estimator);

    abstract void table(Estimator estimator, PrintWriter out);

    @Override
    public Integer call() throws JsonProcessingException {
        Estimator estimator = catalog.estimator();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(Json.MAPPER.writeValueAsString(rows(estimator)));
        } else {
            table(estimator, out);
        }
        out.flush();
        return ExitCodes.OK;
    }
}
