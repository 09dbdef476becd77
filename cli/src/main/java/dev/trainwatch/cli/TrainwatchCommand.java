package dev.trainwatch.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

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

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Builds the command line with trainwatch's error handling; tests call this with their own writers. */
    public static CommandLine newCommandLine(PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new TrainwatchCommand());
        cli.setOut(out);
        cli.setErr(err);
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        cli.setParameterExceptionHandler((ex, args) -> {
            ex.getCommandLine().getErr().println("trainwatch: " + ex.getMessage());
            ex.getCommandLine().getErr().println("Try '" + ex.getCommandLine().getCommandSpec().qualifiedName()
                    + " --help' for more information.");
            return ExitCodes.USAGE;
        });
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            commandLine.getErr().println("trainwatch: " + UserError.describe(ex));
            return UserError.exitCodeOf(ex);
        });
        return cli;
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int status = newCommandLine(out, err).execute(args);
        out.flush();
        err.flush();
        System.exit(status);
    }
}
