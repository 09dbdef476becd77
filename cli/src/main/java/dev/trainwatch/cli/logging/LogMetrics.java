package dev.trainwatch.cli.logging;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Locale;

/** Warnings and errors logged, and repeats counted instead of written: a flood shows here though the log is short. */
public final class LogMetrics implements MeterBinder {
    private final LogOutput output;

    public LogMetrics(LogOutput output) {
        this.output = output;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (String level : List.of("ERROR", "WARN")) {
            String severity = level.equals("WARN") ? "warning" : level.toLowerCase(Locale.ROOT);
            FunctionCounter.builder("trainwatch.log.records", output, o -> o.records(level))
                    .description("Log records of this severity, written or held back as repeats")
                    .tag("severity", severity).register(registry);
            FunctionCounter.builder("trainwatch.log.records.suppressed", output, o -> o.suppressed(level))
                    .description("Log records of this severity held back as repeats (counted in a later line)")
                    .tag("severity", severity).register(registry);
        }
    }
}
