package dev.trainwatch.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.trainwatch.cli.logging.LogFormat;
import dev.trainwatch.cli.logging.LogLevel;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --log-output} and {@code --log-level} work before and after any command and leave {@code --log-format} alone. */
class LoggingOptionsTest {
    private static CommandLine parse(String... args) {
        CommandLine cli = TrainwatchCommand.newCommandLine(new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()));
        cli.parseArgs(args);
        return cli;
    }

    @Test
    void defaultsAreOneLineTextAtInfo() {
        TrainwatchCommand top = parse("collector").getCommand();
        assertEquals(LogFormat.TEXT, top.logFormat);
        assertEquals(LogLevel.INFO, top.logLevel);
    }

    @Test
    void theOptionsAreTakenAfterTheCommandToo() {
        TrainwatchCommand top = parse("collector", "--log-output", "JSON", "--log-level", "warn").getCommand();
        assertEquals(LogFormat.JSON, top.logFormat);
        assertEquals(LogLevel.WARN, top.logLevel);
        TrainwatchCommand before = parse("--log-output=json", "demo").getCommand();
        assertEquals(LogFormat.JSON, before.logFormat);
    }

    @Test
    void theAgentsLogFormatStillNamesTheTrainingLogsParser() {
        CommandLine cli = parse("agent", "--collector", "http://127.0.0.1:9477", "--log-format", "pixart",
                "--log-output", "json");
        CommandLine agent = cli.getSubcommands().get("agent");
        assertEquals("pixart", ((AgentCommand) agent.getCommand()).logFormat);
        assertEquals(LogFormat.JSON, ((TrainwatchCommand) cli.getCommand()).logFormat);
    }
}
