package dev.trainwatch.agent.log;

import dev.trainwatch.protocol.StepEvent;
import java.util.Arrays;
import java.util.List;

/** Offers each line to every preset, most specific first, until one recognises a step line; then uses only that one. */
final class AutoLineParser implements StepLineParser {

    private final List<StepLineParser> candidates;
    private StepLineParser chosen;

    AutoLineParser() {
        this.candidates = List.of(new PixArtLineParser(), new SanaLineParser(), new DitLineParser(),
                new OpenSoraLineParser(), new DeepSpeedLineParser(), new TqdmLineParser());
        this.quickCheck = candidates.stream().flatMap(c -> Arrays.stream(c.quickCheck()))
                .distinct().toArray(String[]::new);
    }

    private final String[] quickCheck;

    @Override
    public String[] quickCheck() {
        return chosen == null ? quickCheck : chosen.quickCheck();
    }

    @Override
    public String name() {
        return chosen == null ? "auto" : chosen.name();
    }

    @Override
    public StepEvent parse(String line) {
        if (chosen != null) {
            return chosen.parse(line);
        }
        StepEvent first = null;
        // every candidate sees every line, so stateful presets learn as if chosen from the start
        for (StepLineParser candidate : candidates) {
            StepEvent e = candidate.parse(line);
            if (chosen == null && (e != null || recognises(candidate, line))) {
                chosen = candidate;
                first = e;
            }
        }
        return first;
    }

    /** PixArt and Sana drop a run's very first line; it still identifies the format. */
    private static boolean recognises(StepLineParser candidate, String line) {
        if (candidate instanceof PixArtLineParser) {
            return line.contains("Step/Epoch [") && line.contains("time_all:");
        }
        if (candidate instanceof SanaLineParser) {
            return line.contains("Global Step:") && line.contains("all:");
        }
        return false;
    }

    @Override
    public boolean redraws() {
        return chosen != null && chosen.redraws();
    }
}
