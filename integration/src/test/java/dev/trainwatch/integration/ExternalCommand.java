package dev.trainwatch.integration;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Runs the real peer tools (promtool, prometheus, alertmanager) installed by {@code .ci/install-deps}. */
final class ExternalCommand {
    private ExternalCommand() {}

    /** What a finished command left: its exit status and its stdout and stderr merged, in order. */
    record Result(int exitCode, String output) {}

    /** The executable's path on {@code PATH}, or empty. */
    static Optional<Path> find(String name) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The executable, or a test failure that says how to get it. */
    static Path require(String name, String debianPackage) {
        return find(name).orElseGet(() -> fail(name + " is not on PATH: run `bash .ci/install-deps` (Debian package "
                + debianPackage + ") before `./mvnw verify`"));
    }

    /** Runs a command to completion within {@code timeout}; kills it and fails the test if it takes longer. */
    static Result run(Duration timeout, Path workingDir, List<String> command) {
        return run(timeout, workingDir, command, Map.of());
    }

    /** As above, with {@code environment} added to this process's environment. */
    static Result run(Duration timeout, Path workingDir, List<String> command, Map<String, String> environment) {
        Path log;
        try {
            log = Files.createTempFile("trainwatch-cmd", ".log");
        } catch (IOException e) {
            return fail("cannot create a temporary file: " + e.getMessage());
        }
        // Output goes to a file, so a hung process cannot block us on a pipe and the timeout always applies.
        ProcessBuilder builder = new ProcessBuilder(command).directory(workingDir.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(environment);
        Process process = null;
        try {
            process = builder.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                return fail(command + " did not finish within " + timeout + ":\n" + Files.readString(log));
            }
            return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return fail("cannot run " + command + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail("interrupted while running " + command);
        } finally {
            if (process != null) {
                process.destroyForcibly();
            }
            try {
                Files.deleteIfExists(log);
            } catch (IOException ignored) {
                // A leftover temporary file is harmless.
            }
        }
    }
}
