package dev.trainwatch.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** JNA types only in the NVML package: no other source or compiled class of the agent may refer to them. */
class JnaConfinementTest {

    static final String NVML_DIR = "dev/trainwatch/agent/nvml";

    @Test
    void noSourceOutsideTheNvmlPackageUsesJna() throws IOException {
        List<String> offenders = offenders(Path.of("src/main/java"), ".java", "com.sun.jna");
        offenders.addAll(offenders(Path.of("src/test/java"), ".java", "com.sun.jna"));
        assertThat(offenders).isEmpty();
    }

    @Test
    void noOtherModuleUsesJnaInItsMainSources() throws IOException {
        List<String> offenders = new java.util.ArrayList<>();
        try (Stream<Path> modules = Files.list(Path.of(".."))) {
            for (Path module : modules.filter(m -> Files.isDirectory(m.resolve("src/main/java"))).toList()) {
                if (!module.toAbsolutePath().normalize().equals(Path.of("").toAbsolutePath().normalize())) {
                    offenders.addAll(offenders(module.resolve("src/main/java"), ".java", "com.sun.jna"));
                }
            }
        }
        assertThat(offenders).isEmpty();
    }

    @Test
    void noClassOutsideTheNvmlPackageRefersToJna() throws IOException {
        Path classes = Path.of("target/classes");
        assertThat(classes.resolve(NVML_DIR).resolve("NvmlGpuReader.class")).exists();
        assertThat(offenders(classes, ".class", "com/sun/jna")).isEmpty();
    }

    @Test
    void theCheckWouldCatchAnOffender() throws IOException {
        assertThat(offenders(Path.of("src/main/java"), ".java", "package dev.trainwatch")).isNotEmpty();
    }

    private static List<String> offenders(Path root, String suffix, String needle) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(suffix))
                    .filter(p -> !root.relativize(p).toString().replace('\\', '/').startsWith(NVML_DIR + "/"))
                    // The ArchUnit rule names the package it keeps JNA in.
                    .filter(p -> !p.getFileName().toString().equals("LayeringRulesTest.java"))
                    .filter(p -> contains(p, needle))
                    .map(Path::toString)
                    .collect(java.util.stream.Collectors.toCollection(java.util.ArrayList::new));
        }
    }

    private static boolean contains(Path p, String needle) {
        try {
            return new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1).contains(needle);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
