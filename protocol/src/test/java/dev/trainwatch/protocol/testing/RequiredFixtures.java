package dev.trainwatch.protocol.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test needs from outside the checkout — the real logs of {@code ../shared/corpus}, a peer such as promtool or
 * Chromium, a jar an earlier module built — and what happens when it is missing: on a developer's machine the test
 * is skipped with the reason; where the environment variable {@value #SWITCH} is {@code 1} or {@code true} (CI sets
 * it in {@code .ci/run}) the test fails, so a suite cannot pass because its material was never there.
 */
public final class RequiredFixtures {

    /** The switch that turns every "fixture missing" skip into a failure. */
    public static final String SWITCH = "TRAINWATCH_REQUIRE_FIXTURES";

    private RequiredFixtures() {
    }

    /** Skips, or fails where {@value #SWITCH} is set, unless {@code present}. */
    public static void require(boolean present, String what) {
        require(present, what, System.getenv());
    }

    static void require(boolean present, String what, Map<String, String> environment) {
        if (present) {
            return;
        }
        if (required(environment)) {
            fail("fixture missing: " + what + " (" + SWITCH + " is set, so a missing fixture is a failure)");
        }
        Assumptions.abort("fixture missing: " + what);
    }

    static boolean required(Map<String, String> environment) {
        String value = environment.getOrDefault(SWITCH, "");
        return value.equals("1") || value.equalsIgnoreCase("true");
    }

    /** The checkout's root: Maven's project directory, or the parent of the module the test runs in. */
    public static Path projectRoot() {
        String root = System.getProperty("trainwatch.root", System.getProperty("maven.multiModuleProjectDirectory"));
        return root != null ? Path.of(root) : Path.of("..");
    }

    /** A real log of the corpus beside the checkout ({@code ../shared/corpus/logs/NAME}), required as above. */
    public static Path corpusLog(String name) {
        Path log = projectRoot().resolve("../shared/corpus/logs").resolve(name).toAbsolutePath().normalize();
        require(Files.isRegularFile(log), "the real log " + log + " (../shared/corpus beside the checkout)");
        return log;
    }
}
