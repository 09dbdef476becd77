package dev.trainwatch.cli;

import dev.trainwatch.cli.logging.LogFormat;
import dev.trainwatch.cli.logging.LogLevel;
import dev.trainwatch.cli.logging.LogMetrics;
import dev.trainwatch.cli.logging.LogOutput;
import dev.trainwatch.protocol.Errors;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The {@code trainwatch} command. Subcommands live in their own classes; this one only wires them and maps
 * failures to one-line messages and exit statuses ({@link ExitCodes}).
 */
@Command(name = "trainwatch",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "Watches GPU training runs of diffusion transformers and compares them with what they should cost.",
        subcommands = {
                EstimateCommand.class,
                ModelsCommand.class,
                GpusCommand.class,
                AgentCommand.class,
                CollectorCommand.class,
                WatchCommand.class,
                RunCommand.class,
                DemoCommand.class,
                CommandLine.HelpCommand.class
        })
public final class TrainwatchCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    // Not --log-format: agent, watch and run already use that name for the training log's parser (DESIGN.md).
    @Option(names = "--log-output", paramLabel = "FORMAT", scope = ScopeType.INHERIT,
            defaultValue = "${env:TRAINWATCH_LOG_OUTPUT:-text}",
            description = "trainwatch's own log records on stderr as one line of text or one JSON object per line:"
                    + " text or json (default: ${DEFAULT-VALUE}; environment TRAINWATCH_LOG_OUTPUT).")
    LogFormat logFormat = LogFormat.TEXT;

    @Option(names = "--log-level", paramLabel = "LEVEL", scope = ScopeType.INHERIT,
            defaultValue = "${env:TRAINWATCH_LOG_LEVEL:-info}",
            description = "Least severe log records written: error, warn, info or debug"
                    + " (default: ${DEFAULT-VALUE}; environment TRAINWATCH_LOG_LEVEL).")
    LogLevel logLevel = LogLevel.INFO;

    /** The process's log output once {@code main} set it up; null in tests that build the command line alone. */
    private LogOutput logOutput;

    /** The log's own counts beside the collector's metrics, once {@code main} set up logging (parent null in tests). */
    static void bindLogMetrics(TrainwatchCommand parent, MeterRegistry registry) {
        if (parent != null && parent.logOutput != null) {
            new LogMetrics(parent.logOutput).bindTo(registry);
        }
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * A parse error with the closest subcommand or option: "unknown command 'estimat'; did you mean estimate?";
     * {@code args} as typed, to quote a training command back in its order.
     */
    static String withSuggestion(CommandLine.ParameterException ex, String[] args) {
        if (!(ex instanceof CommandLine.UnmatchedArgumentException unmatched) || unmatched.getUnmatched().isEmpty()) {
            return ex.getMessage();
        }
        CommandLine.Model.CommandSpec command = ex.getCommandLine().getCommandSpec();
        String first = unmatched.getUnmatched().get(0);
        if (!first.startsWith("-") && !command.subcommands().isEmpty()) {
            String where = command.qualifiedName().equals("trainwatch") ? "" : " of " + command.qualifiedName();
            return "unknown command '" + first + "'" + where
                    + Suggestions.didYouMean(first, command.subcommands().keySet());
        }
        if (first.startsWith("-")) {
            String name = first.contains("=") ? first.substring(0, first.indexOf('=')) : first;
            if (command.qualifiedName().equals("trainwatch run")) {
                return commandWithoutDashes(name, args, command);
            }
            return "unknown option '" + name + "'" + Suggestions.didYouMean(name, command.optionsMap().keySet());
        }
        return ex.getMessage();
    }

    /** {@code trainwatch run python3 -c …} without {@code --}: says to put the command after {@code --}. */
    private static String commandWithoutDashes(String name, String[] args, CommandLine.Model.CommandSpec command) {
        String close = Suggestions.didYouMean(name, command.optionsMap().keySet());
        List<String> positional = command.positionalParameters().isEmpty() ? List.of()
                : command.positionalParameters().get(0).stringValues();
        if (List.of(args).contains("--")) {
            return "unknown option '" + name + "' of trainwatch run" + close; // the command is already after --
        }
        // The command as typed: from its first word (or the unknown option) on.
        List<String> all = List.of(args);
        int from = all.indexOf(positional.isEmpty() ? name : positional.get(0));
        List<String> typed = from < 0 ? List.of(name) : all.subList(from, all.size());
        String shown = String.join(" ", typed.subList(0, Math.min(typed.size(), 4))) + (typed.size() > 4 ? " …" : "");
        return "'" + name + "' is not an option of trainwatch run: put the training command after --, as in"
                + " trainwatch run [options] -- " + shown;
    }

    /** Builds the command line with trainwatch's error handling; tests call this with their own writers. */
    public static CommandLine newCommandLine(PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new TrainwatchCommand());
        cli.setOut(out);
        cli.setErr(err);
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        HelpWrapping.install(cli);
        cli.setParameterExceptionHandler((ex, args) -> {
            ex.getCommandLine().getErr().println("trainwatch: " + withSuggestion(ex, args));
            ex.getCommandLine().getErr().println("Try '" + ex.getCommandLine().getCommandSpec().qualifiedName()
                    + " --help' for more information.");
            return ExitCodes.USAGE;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            commandLine.getErr().println("trainwatch: " + Errors.oneLine(ex));
            return UserError.exitCodeOf(ex);
        });
        return cli;
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        // A plain `trainwatch agent …` runs without picocli's model of the command line (AgentFastPath says why).
        Integer agent = AgentFastPath.run(args, err);
        if (agent != null) {
            out.flush();
            err.flush();
            System.exit(agent);
        }
        CommandLine cli = newCommandLine(out, err);
        CommandLine.IExecutionStrategy run = cli.getExecutionStrategy();
        // Logging is set up after parsing (so --log-output and --log-level apply) and before any command runs.
        cli.setExecutionStrategy(parseResult -> {
            TrainwatchCommand top = cli.getCommand();
            top.logOutput = LogOutput.configure(top.logFormat, top.logLevel, System.err);
            return run.execute(parseResult);
        });
        int status = cli.execute(args);
        out.flush();
        err.flush();
        System.exit(status);
    }
}
