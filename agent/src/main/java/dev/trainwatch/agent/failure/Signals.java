package dev.trainwatch.agent.failure;

/** Names and numbers of the Linux signals a training run meets. */
final class Signals {

    private Signals() {
    }

    static String name(int sig) {
        return switch (sig) {
            case 1 -> "SIGHUP";
            case 2 -> "SIGINT";
            case 4 -> "SIGILL";
            case 6 -> "SIGABRT";
            case 7 -> "SIGBUS";
            case 9 -> "SIGKILL";
            case 11 -> "SIGSEGV";
            case 15 -> "SIGTERM";
            default -> "signal " + sig;
        };
    }

    static Integer number(String name) {
        return switch (name) {
            case "SIGHUP" -> 1;
            case "SIGINT" -> 2;
            case "SIGILL" -> 4;
            case "SIGABRT" -> 6;
            case "SIGBUS" -> 7;
            case "SIGKILL" -> 9;
            case "SIGSEGV" -> 11;
            case "SIGTERM" -> 15;
            default -> null;
        };
    }
}
