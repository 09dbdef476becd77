package dev.trainwatch.cli.demo;

import dev.trainwatch.estimator.Estimator;
import java.util.List;

/** The bundled synthetic scenarios of {@code trainwatch demo}. */
public final class Scenarios {

    private Scenarios() {
    }

    /** The five bundled scenarios, each predicted by {@code estimator}. */
    public static List<Scenario> bundled(Estimator estimator) {
        return List.of(
                new HealthyDitScenario(estimator),
                new StarvedPixArtSigmaScenario(estimator),
                new CreepingSanaScenario(estimator),
                new ThrottledStragglerScenario(estimator),
                new FluxLoraScenario(estimator));
    }
}
