package dev.trainwatch.agent.nvml;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Test helper for the fake NVML library built by the agent module ({@code agent/target/fake-nvml/}): where the
 * library files are, scenario files (written or copied from the bundled ones), and the fake's control functions.
 * Published in the agent's test-jar for the integration tests. Scenario format: docs/NVML.md.
 */
public final class FakeNvml {

    /** System property naming the directory of the built fake (set by the agent's surefire configuration). */
    public static final String DIR_PROPERTY = "trainwatch.fakeNvml.dir";
    /** Environment variables the fake reads: the scenario file and the clock mode. */
    public static final String SCENARIO_ENV = "FAKE_NVML_SCENARIO";
    public static final String CLOCK_ENV = "FAKE_NVML_CLOCK";
    /** Build variants: a current driver, an R535 driver (32-byte process stride), no {@code _v3}, an old driver. */
    public static final String CURRENT = ".";
    public static final String R535 = "r535";
    public static final String V2_PROCESSES = "v2procs";
    public static final String LEGACY = "legacy";

    private FakeNvml() {
    }

    /** The fake library of a current driver. */
    public static Path library() {
        return library(CURRENT);
    }

    /** The fake library of a build variant ({@link #CURRENT}, {@link #R535}, {@link #V2_PROCESSES}, {@link #LEGACY}). */
    public static Path library(String variant) {
        Path lib = directory().resolve(variant).resolve("libnvidia-ml.so.1").normalize();
        if (!Files.isRegularFile(lib)) {
            throw new IllegalStateException("fake NVML library not built: " + lib
                    + " (build the agent module's tests: ./mvnw -pl agent test-compile)");
        }
        return lib;
    }

    /** The directory holding the built fake: the system property, else {@code agent/target/fake-nvml} upwards. */
    public static Path directory() {
        String prop = System.getProperty(DIR_PROPERTY);
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop);
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("agent/target/fake-nvml");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("fake NVML directory not found; set -D" + DIR_PROPERTY);
    }

    /** Copies a bundled scenario ({@code nvml-scenarios/NAME} on the test classpath) into {@code dir}. */
    public static Path bundledScenario(String name, Path dir) {
        try (InputStream in = FakeNvml.class.getResourceAsStream("/nvml-scenarios/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no bundled scenario " + name);
            }
            Path out = dir.resolve(name);
            Files.copy(in, out, StandardCopyOption.REPLACE_EXISTING);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A scenario to write line by line. */
    public static Scenario scenario() {
        return new Scenario();
    }

    /** The control functions of one loaded fake (the same library instance the reader then loads). */
    public static Control control(Path library) {
        return Native.load(library.toAbsolutePath().toString(), Control.class,
                Map.of(Library.OPTION_OPEN_FLAGS, 1));
    }

    /** The fake's own exports, plus nvmlShutdown to play "someone else shut NVML down". */
    public interface Control extends Library {
        /** Sets the scenario clock, in scenario seconds (fixed from then on). */
        void fake_nvml_set_time(double seconds);

        /** Loads a scenario file; 0 on success (errors go to stderr). */
        int fake_nvml_load_scenario(String path);

        /** Successful inits minus shutdowns: 0 when every acquire was released. */
        int fake_nvml_refcount();

        long fake_nvml_init_calls();

        long fake_nvml_shutdown_calls();

        int nvmlShutdown();

        /** GPM samples allocated and not yet freed: 0 when every sample was released. */
        long fake_nvml_gpm_samples_live();

        /** Loads the scenario and sets the time, failing loudly on a bad file. */
        default void play(Path scenario, double seconds) {
            if (fake_nvml_load_scenario(scenario.toAbsolutePath().toString()) != 0) {
                throw new IllegalArgumentException("fake NVML rejected scenario " + scenario);
            }
            fake_nvml_set_time(seconds);
        }
    }

    /** Builds a scenario file: lines {@code <time> <gpu|-|*> <key> [value]}. */
    public static final class Scenario {
        private final List<String> lines = new ArrayList<>();

        /** A value of one GPU from scenario time {@code t} on. */
        public Scenario at(double t, int gpu, String key, Object value) {
            return line(t, Integer.toString(gpu), key, value);
        }

        /** A value of every GPU declared so far from {@code t} on. */
        public Scenario all(double t, String key, Object value) {
            return line(t, "*", key, value);
        }

        /** A node-wide setting or error ({@code driver}, {@code gpus}, {@code epoch}, {@code error nvmlInit_v2 9}). */
        public Scenario global(String key, Object value) {
            return line(0, "-", key, value);
        }

        /** A raw line. */
        public Scenario raw(String line) {
            lines.add(line);
            return this;
        }

        private Scenario line(double t, String gpu, String key, Object value) {
            lines.add(String.format(Locale.ROOT, "%s %s %s%s", t, gpu, key, value == null ? "" : " " + value));
            return this;
        }

        public Path write(Path file) {
            try {
                Files.write(file, lines);
                return file;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
