package dev.trainwatch.estimator.config;

import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Path;

/** {@link ConfigReaders} as the tests call it: against the bundled catalog unless one is given. */
public final class BundledConfigs {

    private static final Catalog CATALOG = Catalog.bundled();

    private BundledConfigs() {
    }

    public static ConfigReaders.Read readWithNotes(Path file) {
        return ConfigReaders.readWithNotes(file, CATALOG);
    }

    public static ConfigReaders.Read readWithNotes(Path file, Catalog catalog) {
        return ConfigReaders.readWithNotes(file, catalog);
    }

    public static RunSpec read(Path file) {
        return read(file, CATALOG);
    }

    public static RunSpec read(Path file, Catalog catalog) {
        return ConfigReaders.readWithNotes(file, catalog).spec();
    }
}
