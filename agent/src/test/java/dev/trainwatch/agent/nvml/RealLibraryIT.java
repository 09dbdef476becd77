package dev.trainwatch.agent.nvml;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.trainwatch.agent.gpu.GpuUnavailableException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Loading that fails: NVIDIA's real library on a machine without the driver, missing or foreign files. */
class RealLibraryIT {

    static Path buildDeps() {
        String prop = System.getProperty("trainwatch.buildDeps.dir");
        return prop != null ? Path.of(prop) : Path.of("..", "build-deps");
    }

    @Test
    void nvidiasRealLibraryWithoutADriverSaysDriverNotLoaded() {
        Path real = buildDeps().resolve("libnvidia-ml.so.1.real");
        assertThat(real).as("run .ci/install-deps: it unpacks Debian's libnvidia-ml1").exists();
        assertThatThrownBy(() -> NvmlGpuReader.open(Optional.of(real), Clock.systemUTC()))
                .isInstanceOf(GpuUnavailableException.class)
                .hasMessage("NVIDIA driver not loaded (NVML: Driver Not Loaded)");
    }

    @Test
    void withoutADriverInstalledTheSystemLibraryIsNotFound() throws Exception {
        Process ldconfig = new ProcessBuilder("/sbin/ldconfig", "-p").redirectErrorStream(true).start();
        String cache = new String(ldconfig.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        ldconfig.waitFor();
        Assumptions.assumeFalse(cache.contains("libnvidia-ml.so.1"), "a driver is installed");
        // In a JVM of its own: once any test has loaded a fake, the dynamic loader answers the name
        // libnvidia-ml.so.1 with that already-loaded library (same soname).
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                SystemLibraryProbe.class.getName()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).isEqualTo("NVML library not found: libnvidia-ml.so.1 (is the NVIDIA driver installed?)");
    }

    /** Opens the system's NVML and prints the failure's message. */
    static final class SystemLibraryProbe {
        public static void main(String[] args) {
            try (NvmlGpuReader r = NvmlGpuReader.open(Optional.empty(), Clock.systemUTC())) {
                System.out.println("opened, driver " + r.driverVersion());
            } catch (GpuUnavailableException e) {
                System.out.println(e.getMessage());
            }
        }
    }

    @Test
    void aMissingFileIsNamed() {
        assertThatThrownBy(() -> NvmlGpuReader.open(Optional.of(Path.of("/nonexistent/libnvidia-ml.so.1")),
                Clock.systemUTC()))
                .isInstanceOf(GpuUnavailableException.class)
                .hasMessage("NVML library not found: /nonexistent/libnvidia-ml.so.1");
    }

    @Test
    void aFileThatIsNotNvmlIsSaidSo() throws Exception {
        Path libc = Files.list(Path.of("/lib/x86_64-linux-gnu")).filter(p -> p.getFileName().toString()
                .equals("libm.so.6")).findFirst().orElseThrow();
        assertThatThrownBy(() -> NvmlGpuReader.open(Optional.of(libc), Clock.systemUTC()))
                .isInstanceOf(GpuUnavailableException.class)
                .hasMessageStartingWith("not an NVML library");
    }

    @Test
    void aFileThatIsNoLibraryCannotBeLoaded() throws Exception {
        Path junk = Files.createTempFile("libnvidia-ml", ".so.1");
        try {
            Files.writeString(junk, "not ELF");
            assertThatThrownBy(() -> NvmlGpuReader.open(Optional.of(junk), Clock.systemUTC()))
                    .isInstanceOf(GpuUnavailableException.class)
                    .hasMessageStartingWith("NVML library cannot be loaded: " + junk.toAbsolutePath())
                    .hasMessageNotContaining("\n");
        } finally {
            Files.delete(junk);
        }
    }
}
