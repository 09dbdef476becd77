package dev.trainwatch.collector.state;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * {@link RunState} owns its fields: every change goes through one of its named methods (issue 41), so no field of it
 * may be anything but private.
 */
class RunStateEncapsulationTest {

    @Test
    void everyFieldOfTheRunStateIsPrivate() {
        JavaClasses classes = new ClassFileImporter().importClasses(RunState.class);
        fields().that().areDeclaredIn(RunState.class).should().bePrivate().check(classes);
    }

    @Test
    void theRuleSeesTheFields() {
        // The rule above passes vacuously if it reads no field: the run state has dozens.
        assertThat(Arrays.stream(RunState.class.getDeclaredFields()).filter(f -> !f.isSynthetic())
                .map(Field::getModifiers).filter(Modifier::isPrivate).count()).isGreaterThan(40);
    }
}
