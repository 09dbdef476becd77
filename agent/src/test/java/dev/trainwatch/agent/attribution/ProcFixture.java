package dev.trainwatch.agent.attribution;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/** Copies a captured /proc layout from the test resources to a directory a test may change. */
final class ProcFixture {

    private ProcFixture() {
    }

    static Path copy(String name, Path target) {
        try {
            Path source = Path.of(ProcFixture.class.getResource("/proc/" + name).toURI());
            try (Stream<Path> files = Files.walk(source)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Path to = target.resolve(source.relativize(file).toString());
                    if (Files.isDirectory(file)) {
                        Files.createDirectories(to);
                    } else {
                        Files.copy(file, to, StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static void exit(Path root, long pid) {
        try (Stream<Path> files = Files.walk(root.resolve(Long.toString(pid)))) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
