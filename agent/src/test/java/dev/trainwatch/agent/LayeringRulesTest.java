package dev.trainwatch.agent;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The agent's layering rules (docs/ARCHITECTURE.md), checked on its compiled classes. */
class LayeringRulesTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.trainwatch.agent");

    @Test
    void jnaStaysInTheNvmlPackage() {
        noClasses().that().resideOutsideOfPackage("dev.trainwatch.agent.nvml..")
                .should().dependOnClassesThat().resideInAPackage("com.sun.jna..")
                .because("native types stop at the agent's nvml package")
                .check(MAIN);
    }

    @Test
    void onlyTheNvmlPackageKnowsHowGpusAreRead() {
        noClasses().that().resideInAnyPackage("dev.trainwatch.agent.log..", "dev.trainwatch.agent.attribution..",
                        "dev.trainwatch.agent.failure..", "dev.trainwatch.agent.ship..")
                .should().dependOnClassesThat().resideInAPackage("dev.trainwatch.agent.nvml..")
                .because("the agent's other parts see GPUs through the GpuReader interface")
                .check(MAIN);
    }
}
