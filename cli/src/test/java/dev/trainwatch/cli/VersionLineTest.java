package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The version says the commit the build was made from, so two builds of one version can be told apart. */
@Timeout(30)
class VersionLineTest {

    @Test
    void theVersionNamesTheCommitItWasBuiltFrom() {
        StringWriter out = new StringWriter();
        int code = TrainwatchCommand.newCommandLine(new PrintWriter(out, true), new PrintWriter(new StringWriter()))
                .execute("--version");
        assertThat(code).isZero();
        assertThat(out.toString().strip()).matches("trainwatch \\S+ \\(commit ([0-9a-f]{12}(-dirty)?|unknown)\\)");
    }

    @Test
    void withoutACommitTheLineIsTheVersionAlone() {
        assertThat(VersionProvider.line("1.2.3", null)).isEqualTo("trainwatch 1.2.3");
        assertThat(VersionProvider.line("1.2.3", "abcdef012345")).isEqualTo("trainwatch 1.2.3 (commit abcdef012345)");
    }
}
