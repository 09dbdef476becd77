package dev.trainwatch.collector;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import org.junit.jupiter.api.Test;

/**
 * The collector's layering rules (docs/ARCHITECTURE.md, "Rules the code keeps"), checked on its compiled classes.
 * Each rule fails when the classes it is about are missing, so a renamed package cannot make it pass vacuously.
 */
class LayeringRulesTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.trainwatch.collector");

    @Test
    void vertxAndNettyStayAtTheHttpEdgeAndTheServerThatStartsIt() {
        noClasses().that().resideOutsideOfPackage("dev.trainwatch.collector.http..")
                .and().haveNameNotMatching("dev\\.trainwatch\\.collector\\.CollectorServer(\\$.*)?")
                .should().dependOnClassesThat().resideInAnyPackage("io.vertx..", "io.netty..")
                .because("Vert.x types stay at the collector's HTTP edge")
                .check(MAIN);
    }

    @Test
    void stateDependsOnNoneOfTheOutputs() {
        noClasses().that().resideInAPackage("dev.trainwatch.collector.state..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.trainwatch.collector.series..",
                        "dev.trainwatch.collector.http..", "dev.trainwatch.collector.metrics..",
                        "dev.trainwatch.collector.alerting..", "dev.trainwatch.collector.history..",
                        "io.micrometer..", "java.sql..", "dev.trainwatch.exposition..")
                .because("series, metrics, alerting and history read state; state knows none of them")
                .check(MAIN);
    }

    @Test
    void detectionKnowsOnlyWhatItIsGiven() {
        noClasses().that().resideInAPackage("dev.trainwatch.collector.detect..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.trainwatch.collector.state..",
                        "dev.trainwatch.collector.series..", "dev.trainwatch.collector.http..",
                        "dev.trainwatch.collector.metrics..", "dev.trainwatch.collector.alerting..",
                        "dev.trainwatch.collector.history..")
                .because("detectors see a run through RunContext only")
                .check(MAIN);
    }

    @Test
    void stateAndDetectionTakeTheirTimeFromTheInjectedClock() {
        noClasses().that().resideInAnyPackage("dev.trainwatch.collector.state..", "dev.trainwatch.collector.detect..")
                .should().callMethod(System.class, "currentTimeMillis")
                .orShould().callMethod(Instant.class, "now")
                .orShould().callMethod(LocalDateTime.class, "now")
                .orShould().callMethod(Clock.class, "systemUTC")
                .orShould().callMethod(Clock.class, "systemDefaultZone")
                .because("comparison and detection take an injected java.time.Clock (monotonic nanoTime for timeouts is"
                        + " allowed)")
                .check(MAIN);
    }
}
