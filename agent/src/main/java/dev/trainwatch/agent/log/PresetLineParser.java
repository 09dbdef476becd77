package dev.trainwatch.agent.log;

/** A preset: its name, and the strings of which every step line holds one. */
abstract class PresetLineParser implements StepLineParser {

    private final String name;
    private final String[] quickCheck;

    PresetLineParser(String name, String... quickCheck) {
        this.name = name;
        this.quickCheck = quickCheck;
    }

    @Override
    public final String[] quickCheck() {
        return quickCheck;
    }

    @Override
    public final String name() {
        return name;
    }
}
