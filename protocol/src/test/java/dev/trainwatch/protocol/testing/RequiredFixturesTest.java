package dev.trainwatch.protocol.testing;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

class RequiredFixturesTest {

    @Test
    void aMissingFixtureSkipsWhereNobodyAskedForFixtures() {
        assertThatThrownBy(() -> RequiredFixtures.require(false, "promtool", Map.of()))
                .isInstanceOf(TestAbortedException.class).hasMessageContaining("fixture missing: promtool");
        assertThatThrownBy(() -> RequiredFixtures.require(false, "promtool", Map.of(RequiredFixtures.SWITCH, "0")))
                .isInstanceOf(TestAbortedException.class);
    }

    @Test
    void aMissingFixtureFailsWhereCiAsksForFixtures() {
        for (String on : new String[] {"1", "true", "TRUE"}) {
            assertThatThrownBy(() -> RequiredFixtures.require(false, "the corpus",
                    Map.of(RequiredFixtures.SWITCH, on)))
                    .isInstanceOf(AssertionFailedError.class).isNotInstanceOf(TestAbortedException.class)
                    .hasMessageContaining("fixture missing: the corpus");
        }
    }

    @Test
    void aPresentFixtureNeitherSkipsNorFails() {
        assertThatCode(() -> RequiredFixtures.require(true, "x", Map.of(RequiredFixtures.SWITCH, "1")))
                .doesNotThrowAnyException();
        assertThatCode(() -> RequiredFixtures.require(true, "x", Map.of())).doesNotThrowAnyException();
    }
}
