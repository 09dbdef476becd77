package dev.trainwatch.integration;

import dev.trainwatch.protocol.testing.RequiredFixtures;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code trainwatch} launcher and the runnable jar as a user meets them: without Java, with a Java that is
 * too old, and on a current JDK (no restricted-method warnings from JNA or SQLite).
 */
class LauncherIT {
    private static final Duration TIMEOUT = Duration.ofMinutes(1);

    private static Path launcher() {
        return ProjectFiles.root().resolve("trainwatch");
    }

    private static Path runnableJar() {
        return ProjectFiles.root().resolve("cli/target/trainwatch-all.jar");
    }

    /** A directory holding only the commands the launcher needs before it looks for Java. */
    private static Path pathWithout(Path dir, String... tools) throws IOException {
        Files.createDirectories(dir);
        for (String tool : tools) {
            Path target = ExternalCommand.find(tool).orElseThrow();
            Files.createSymbolicLink(dir.resolve(tool), target);
        }
        return dir;
    }

    private static ExternalCommand.Result runLauncher(Path pathDir, String javaHome) {
        List<String> command = new ArrayList<>(List.of("env", "-i", "PATH=" + pathDir));
        if (javaHome != null) {
            command.add("JAVA_HOME=" + javaHome);
        }
        command.addAll(List.of("/bin/bash", launcher().toString(), "--version"));
        return ExternalCommand.run(TIMEOUT, ProjectFiles.root(), command);
    }

    @Test
    void withoutJavaTheLauncherSaysWhatToInstallInOneLine(@TempDir Path tmp) throws IOException {
        Path bin = pathWithout(tmp.resolve("bin"), "dirname", "awk");
        ExternalCommand.Result result = runLauncher(bin, null);
        assertEquals(1, result.exitCode(), result.output());
        assertThat(result.output().strip()).doesNotContain("\n")
                .startsWith("trainwatch: Java 17 or newer is needed")
                .contains("apt-get install openjdk-17-jre-headless")
                .doesNotContain("not found: java");
    }

    @Test
    void aJavaOlderThan17IsNamedWithItsVersion(@TempDir Path tmp) throws IOException {
        Path bin = pathWithout(tmp.resolve("bin"), "dirname", "awk");
        Path oldJavaHome = tmp.resolve("jdk11");
        Path oldJava = Files.createDirectories(oldJavaHome.resolve("bin")).resolve("java");
        // What `java -XshowSettings:properties -version` prints on Java 11, reduced to the line the launcher reads.
        Files.writeString(oldJava, "#!/bin/sh\necho '    java.specification.version = 11' >&2\necho 'openjdk version \"11.0.22\"' >&2\n");
        Files.setPosixFilePermissions(oldJava, PosixFilePermissions.fromString("rwxr-xr-x"));
        ExternalCommand.Result result = runLauncher(bin, oldJavaHome.toString());
        assertEquals(1, result.exitCode(), result.output());
        assertThat(result.output().strip()).doesNotContain("\n")
                .contains("Java 17 or newer is needed, but " + oldJava + " is Java 11");
    }

    @Test
    void theRunnableJarEnablesNativeAccess() throws IOException {
        Path jar = runnableJar();
        RequiredFixtures.require(Files.isRegularFile(jar), "the cli module's runnable jar, built before these tests");
        try (JarFile file = new JarFile(jar.toFile())) {
            assertEquals("ALL-UNNAMED", file.getManifest().getMainAttributes().getValue("Enable-Native-Access"));
        }
    }

    @Test
    void aCurrentJdkPrintsNoRestrictedMethodWarnings() {
        Path jar = runnableJar();
        // Java 22+ warns when native code is loaded without native access; the machines here carry Temurin 25.
        Path modernJava = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
        RequiredFixtures.require(Files.isRegularFile(jar), "the cli module's runnable jar, built before these tests");
        // Not a fixture CI installs: machines here usually carry Temurin 25, but a machine without it skips this.
        assumeTrue(Files.isExecutable(modernJava), "needs a JDK 22+ at " + modernJava);
        // `agent --once` loads JNA (and fails cleanly: no NVIDIA driver here); `models` loads nothing native but
        // proves the jar starts on this JDK at all.
        ExternalCommand.Result agent = ExternalCommand.run(TIMEOUT, ProjectFiles.root(),
                List.of(modernJava.toString(), "-jar", jar.toString(), "agent", "--once", "--json"));
        assertThat(agent.output()).doesNotContain("WARNING").contains("trainwatch:");
        ExternalCommand.Result models = ExternalCommand.run(TIMEOUT, ProjectFiles.root(),
                List.of(modernJava.toString(), "-jar", jar.toString(), "models"));
        assertEquals(0, models.exitCode(), models.output());
        assertThat(models.output()).doesNotContain("WARNING");
    }

    /**
     * The agent's class-data sharing archive on a fresh install, laid out as docs/DEPLOY.md installs it (the launcher
     * next to the jar, no sources): the first start makes it (a short training run) in the cache directory systemd
     * gives the unit ({@code CACHE_DIRECTORY}), never builds or writes next to the jar, and the agent still runs; the
     * next start maps it without a word from the JVM; where the archive cannot be written the launcher does not try
     * (a test of the directory in the launcher, not exercised here: this may run as root).
     */
    @Test
    void theFirstAgentStartMakesItsClassArchiveAndNeverFailsForIt(@TempDir Path tmp) throws IOException {
        Path install = tmp.resolve("opt-trainwatch");
        Path cache = tmp.resolve("var-cache-trainwatch-agent");
        Files.createDirectories(install);
        Files.copy(launcher(), install.resolve("trainwatch"));
        Files.copy(runnableJar(), install.resolve("trainwatch-all.jar"));
        List<String> agentOnce = List.of("/usr/bin/env", "CACHE_DIRECTORY=" + cache, "/bin/bash",
                install.resolve("trainwatch").toString(), "agent", "--once",
                "--nvml-library", tmp.resolve("no-such-libnvidia-ml.so.1").toString());

        ExternalCommand.Result first = ExternalCommand.run(TIMEOUT, tmp, agentOnce);
        // No NVML here: the agent says so in one line (exit 3), as it does without an archive.
        assertEquals(3, first.exitCode(), first.output());
        assertThat(first.output()).contains("trainwatch:").doesNotContain("cds").doesNotContain("Exception")
                .doesNotContain("building");
        try (var archives = Files.list(cache)) {
            assertThat(archives.map(p -> p.getFileName().toString()))
                    .anyMatch(name -> name.startsWith("trainwatch-agent-") && name.endsWith(".jsa"))
                    .noneMatch(name -> name.endsWith(".tmp"));
        }
        try (var installed = Files.list(install)) {
            assertThat(installed.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("trainwatch", "trainwatch-all.jar");
        }

        ExternalCommand.Result second = ExternalCommand.run(TIMEOUT, tmp, agentOnce);
        assertEquals(3, second.exitCode(), second.output());
        assertThat(second.output()).isEqualTo(first.output());
    }

    /**
     * In a checkout the launcher rebuilds when the sources are newer than the jar, and only then: a build that leaves
     * the jar as it was (Maven does not rewrite an unchanged jar) must not make every later start rebuild, and an
     * edited test (not in the jar) makes nothing stale. The checkout here has a stand-in {@code mvnw} that only
     * counts its calls.
     */
    @Test
    void theLauncherRebuildsOnceForChangedSourcesAndNeverForTests(@TempDir Path tmp) throws IOException {
        Path checkout = tmp.resolve("checkout");
        Path jar = checkout.resolve("cli/target/trainwatch-all.jar");
        Files.createDirectories(jar.getParent());
        Files.createDirectories(checkout.resolve("cli/src/main/java"));
        Files.createDirectories(checkout.resolve("cli/src/test/java"));
        Files.copy(launcher(), checkout.resolve("trainwatch"));
        Files.copy(runnableJar(), jar);
        Path calls = tmp.resolve("mvnw-calls");
        Path mvnw = checkout.resolve("mvnw");
        Files.writeString(mvnw, "#!/bin/sh\necho build >> '" + calls + "'\n");
        Files.setPosixFilePermissions(mvnw, PosixFilePermissions.fromString("rwxr-xr-x"));
        long hourAgo = System.currentTimeMillis() - 3_600_000;
        Files.setLastModifiedTime(jar, java.nio.file.attribute.FileTime.fromMillis(hourAgo));
        Files.writeString(checkout.resolve("cli/src/main/java/Changed.java"), "class Changed {}");
        List<String> version = List.of("/bin/bash", checkout.resolve("trainwatch").toString(), "--version");

        ExternalCommand.Result first = ExternalCommand.run(TIMEOUT, checkout, version);
        assertEquals(0, first.exitCode(), first.output());
        assertThat(first.output()).contains("building");
        assertThat(Files.readAllLines(calls)).hasSize(1);

        ExternalCommand.Result second = ExternalCommand.run(TIMEOUT, checkout, version);
        assertEquals(0, second.exitCode(), second.output());
        assertThat(second.output()).doesNotContain("building");
        Files.writeString(checkout.resolve("cli/src/test/java/ChangedTest.java"), "class ChangedTest {}");
        ExternalCommand.Result afterTestEdit = ExternalCommand.run(TIMEOUT, checkout, version);
        assertEquals(0, afterTestEdit.exitCode(), afterTestEdit.output());
        assertThat(afterTestEdit.output()).doesNotContain("building");
        assertThat(Files.readAllLines(calls)).as("builds").hasSize(1);
    }
}
