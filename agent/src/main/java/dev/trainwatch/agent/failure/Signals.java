package dev.trainwatch.agent.failure;

import java.util.Map;

/** Names and numbers of the Linux signals a training run meets. */
final class Signals {

    private static final Map<Integer, String> NAMES = Map.of(1, "SIGHUP", 2, "SIGINT", 4, "SIGILL", 6, "SIGABRT",
            7, "SIGBUS", 9, "SIGKILL", 11, "SIGSEGV", 15, "SIGTERM");

    private Signals() {
    }

    static String name(int sig) {
        return NAMES.getOrDefault(sig, "signal " + sig);
    }

    static Integer number(String name) {
        return NAMES.entrySet().stream().filter(e -> e.getValue().equals(name)).map(Map.Entry::getKey).findFirst()
                .orElse(null);
    }
}
