package dev.trainwatch.integration;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The checked-out project's operational files (rules, dashboards, docs), found from the build's base directory. */
final class ProjectFiles {
    private ProjectFiles() {}

    /** The project root: set by the integration module's surefire configuration, else the parent of the cwd. */
    static Path root() {
        String configured = System.getProperty("trainwatch.root");
        Path root = configured != null ? Path.of(configured) : Path.of("").toAbsolutePath().getParent();
        return root.toAbsolutePath().normalize();
    }

    static Path alertsDir() {
        return root().resolve("alerts");
    }

    static Path dashboardsDir() {
        return root().resolve("dashboards");
    }

    static Path docs(String name) {
        return root().resolve("docs").resolve(name);
    }

    /** Rule files, {@code alerts/*.rules.yml}, sorted. */
    static List<Path> ruleFiles() {
        return list(alertsDir(), ".rules.yml");
    }

    /** promtool unit-test files, {@code alerts/tests/*.test.yml}, sorted. */
    static List<Path> ruleTestFiles() {
        return list(alertsDir().resolve("tests"), ".test.yml");
    }

    /** Grafana dashboards, {@code dashboards/*.json}, sorted. */
    static List<Path> dashboards() {
        return list(dashboardsDir(), ".json");
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    private static List<Path> list(Path dir, String suffix) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
    }
}
