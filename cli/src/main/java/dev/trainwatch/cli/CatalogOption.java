package dev.trainwatch.cli;

import dev.trainwatch.estimator.Estimator;
import dev.trainwatch.estimator.catalog.CatalogException;
import java.io.File;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --catalog FILE} (else {@code TRAINWATCH_CATALOG}, path-separated): user catalog files added to the bundled
 * ones at start. A picocli mixin shared by every command that estimates.
 */
public final class CatalogOption {

    /** The environment variable naming user catalog files when {@code --catalog} is not given. */
    public static final String ENV = "TRAINWATCH_CATALOG";

    @Option(names = "--catalog", paramLabel = "FILE",
            description = "A user catalog (JSON: gpus, models, encoders as in the bundled catalogs) added to the bundled one;"
                    + " repeatable. Default: $" + ENV + ".")
    List<Path> files;

    /** The user catalog files: the options', else the environment's; empty for none. */
    public List<Path> files() {
        return files(System.getenv());
    }

    List<Path> files(Map<String, String> env) {
        if (files != null && !files.isEmpty()) {
            return List.copyOf(files);
        }
        String value = env.get(ENV);
        return value == null ? List.of() : Arrays.stream(value.split(File.pathSeparator)).filter(p -> !p.isBlank())
                .map(p -> Path.of(p.strip())).toList();
    }

    /**
     * The bundled estimator with the user catalogs added.
     *
     * @throws UserError (usage) with the catalog's one-line reason when a file is missing or wrong
     */
    public Estimator estimator() {
        return load(files());
    }

    static Estimator load(List<Path> files) {
        try {
            return Estimator.withUserCatalogs(files);
        } catch (CatalogException e) {
            throw new UserError(ExitCodes.USAGE, e.getMessage());
        }
    }
}
