package dev.trainwatch.cli;

import dev.trainwatch.cli.logging.LogFormat;
import dev.trainwatch.cli.logging.LogLevel;
import dev.trainwatch.cli.logging.LogOutput;
import dev.trainwatch.protocol.Errors;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A plain {@code trainwatch agent} command line (the agent's value options, each once, plain values) set up without
 * picocli's model of the whole command, which costs ~180 picocli classes the class-data archive cannot hold plus the
 * JDK's reflection. Anything else ({@code --help}, {@code --once}, an unknown or repeated option, …) returns null and
 * goes to picocli; failures are reported as picocli's handler would ({@link TrainwatchCommand#newCommandLine}).
 *
 * <p>A second command-line reader kept under the 10% rule (docs/PERFORMANCE.md, "Hand-written copies"). Upstream:
 * remkop/picocli#1623 (class-data sharing) and #539 (a model built at compile time); when either lands, measure again.
 */
final class AgentFastPath {

    private AgentFastPath() {
    }

    /** Options taking a value, as {@link AgentCommand} and {@link TrainwatchCommand} (inherited) declare them. */
    private static final Set<String> VALUE_OPTIONS = Set.of("--collector", "--attach", "--log", "--log-format",
            "--run-id", "--interval", "--ship-every", "--nvml-library", "--token-file", "--spool-dir",
            "--spool-max-mb", "--host", "--log-time", "--log-output", "--log-level", "--listen");

    /** What the command line says, or null when picocli must read it. */
    static final class Parsed {
        final AgentCommand command = new AgentCommand();
        LogFormat logFormat;
        LogLevel logLevel;
    }

    /**
     * Reads {@code args} when they are a plain {@code agent} command line.
     *
     * @param env the environment ({@code TRAINWATCH_LOG_OUTPUT}, {@code TRAINWATCH_LOG_LEVEL} defaults)
     * @return the command with its fields set, or null to leave the command line to picocli
     */
    static Parsed parse(String[] args, Map<String, String> env) {
        if (args.length == 0 || !"agent".equals(args[0])) {
            return null;
        }
        Parsed parsed = new Parsed();
        AgentCommand c = parsed.command;
        // The annotations' default values.
        c.logFormat = AgentCommand.DEFAULT_LOG_FORMAT;
        c.interval = AgentCommand.DEFAULT_INTERVAL;
        c.spoolMaxMb = Long.parseLong(AgentCommand.DEFAULT_SPOOL_MAX_MB);
        c.logTime = AgentCommand.DEFAULT_LOG_TIME;
        String logOutput = env.getOrDefault("TRAINWATCH_LOG_OUTPUT", "text");
        String logLevel = env.getOrDefault("TRAINWATCH_LOG_LEVEL", "info");
        if (logOutput.isEmpty() || logLevel.isEmpty()) {
            return null; // how picocli reads an empty variable is its business
        }
        Set<String> seen = new HashSet<>();
        for (int i = 1; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--cds-training") && seen.add(arg)) {
                c.cdsTraining = true; // the launcher's archive run: it must load what this path loads
                continue;
            }
            String name = arg;
            String value;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                return null;
            }
            if (!VALUE_OPTIONS.contains(name) || !seen.add(name) || !plain(value)) {
                return null;
            }
            switch (name) {
                case "--collector" -> c.collector = List.of(value);
                case "--attach" -> {
                    Long pid = decimal(value);
                    if (pid == null) {
                        return null;
                    }
                    c.attachPid = pid;
                }
                case "--log" -> c.log = Path.of(value);
                case "--log-format" -> c.logFormat = value;
                case "--run-id" -> c.runId = value;
                case "--interval" -> c.interval = value;
                case "--ship-every" -> c.shipEvery = value;
                case "--nvml-library" -> c.nvmlLibrary = Path.of(value);
                case "--token-file" -> c.tokenFile = Path.of(value);
                case "--spool-dir" -> c.spoolDir = Path.of(value);
                case "--spool-max-mb" -> {
                    Long mb = decimal(value);
                    if (mb == null) {
                        return null;
                    }
                    c.spoolMaxMb = mb;
                }
                case "--host" -> c.host = value;
                case "--listen" -> c.listen = value;
                case "--log-time" -> c.logTime = value;
                case "--log-output" -> logOutput = value;
                case "--log-level" -> logLevel = value;
                default -> {
                    return null;
                }
            }
        }
        parsed.logFormat = constant(LogFormat.values(), logOutput);
        parsed.logLevel = constant(LogLevel.values(), logLevel);
        if (parsed.logFormat == null || parsed.logLevel == null) {
            return null;
        }
        return parsed;
    }

    /** Runs a plain {@code agent} command line as {@code main} would through picocli; null when it is not one. */
    static Integer run(String[] args, PrintWriter err) {
        Parsed parsed;
        try {
            parsed = parse(args, System.getenv());
        } catch (RuntimeException e) {
            return null; // e.g. a path the file system refuses: picocli reports it as it always did
        }
        if (parsed == null) {
            return null;
        }
        LogOutput.configure(parsed.logFormat, parsed.logLevel, System.err);
        try {
            return parsed.command.call();
        } catch (Exception ex) {
            // As TrainwatchCommand's execution-exception handler.
            err.println("trainwatch: " + Errors.oneLine(ex));
            return UserError.exitCodeOf(ex);
        }
    }

    /** A value picocli takes as it is: not empty, not option-like, not an argument file. */
    private static boolean plain(String value) {
        return !value.isEmpty() && !value.startsWith("-") && !value.startsWith("@");
    }

    /** A decimal number without sign or leading zero (so every way of reading it agrees), or null. */
    private static Long decimal(String value) {
        if (value.length() > 18 || (value.length() > 1 && value.charAt(0) == '0')) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            if (ch < '0' || ch > '9') {
                return null;
            }
        }
        return Long.parseLong(value);
    }

    /** The constant named {@code value} in any case (picocli's case-insensitive enum values), or null. */
    private static <E extends Enum<E>> E constant(E[] values, String value) {
        for (E e : values) {
            if (e.name().equalsIgnoreCase(value.strip()) && value.strip().equals(value)) {
                return e;
            }
        }
        return null;
    }
}
