package dev.trainwatch.integration;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * No package of the product depends on itself through another: every module's main classes, each package a slice
 * (docs/ARCHITECTURE.md, "Rules the code keeps"). Checked here because this module sees every other module's classes.
 */
class PackageCyclesTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // the other modules' test jars (their fakes and benchmarks) are on this module's class path too
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages("dev.trainwatch");

    @Test
    void everyModuleIsImported() {
        // The rule below passes on nothing at all: make sure it sees all six modules' packages.
        for (String pkg : new String[] {"dev.trainwatch.protocol", "dev.trainwatch.estimator", "dev.trainwatch.exposition", "dev.trainwatch.agent",
            "dev.trainwatch.collector", "dev.trainwatch.cli"}) {
            assertThat(MAIN.containPackage(pkg)).as(pkg).isTrue();
        }
    }

    @Test
    void noPackageCycles() {
        slices().matching("dev.trainwatch.(**)").should().beFreeOfCycles().check(MAIN);
    }
}
