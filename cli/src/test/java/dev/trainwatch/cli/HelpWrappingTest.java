package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Help text wraps at spaces only: no token is split ("Sana-1.⏎6B", "127.0.0.1:⏎9477"), no line is over 80. */
class HelpWrappingTest {

    private static CommandLine cli() {
        return TrainwatchCommand.newCommandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()));
    }

    private static List<CommandLine> everyCommand(CommandLine root) {
        List<CommandLine> all = new java.util.ArrayList<>(List.of(root));
        root.getSubcommands().values().forEach(sub -> all.addAll(everyCommand(sub)));
        return all;
    }

    private static List<String> tokens(String text) {
        return Arrays.stream(text.split("\\s+")).filter(t -> !t.isEmpty()).toList();
    }

    @Test
    void everyCommandsHelpKeepsEveryTokenWholeWithinEightyColumns() {
        // The same help as picocli renders it with room enough never to wrap: the tokens a user reads.
        java.util.Map<String, String> unwrapped = new java.util.HashMap<>();
        for (CommandLine command : everyCommand(new CommandLine(new TrainwatchCommand()))) {
            command.getCommandSpec().usageMessage().width(2_000);
            unwrapped.put(command.getCommandSpec().qualifiedName(), command.getUsageMessage());
        }
        List<CommandLine> commands = everyCommand(cli());
        assertThat(commands).hasSizeGreaterThanOrEqualTo(10);
        for (CommandLine command : commands) {
            String help = command.getUsageMessage();
            String name = command.getCommandSpec().qualifiedName();
            assertThat(tokens(help)).as(name).isEqualTo(tokens(unwrapped.get(name)));
            assertThat(help.lines()).as(name).allSatisfy(line ->
                    assertThat(line.length() <= HelpWrapping.WIDTH || !line.strip().contains(" "))
                            .as(line).isTrue());
        }
    }

    @Test
    void theTokensTheIssueFoundSplitStayWhole() {
        String demo = cli().getSubcommands().get("demo").getUsageMessage();
        assertThat(demo).contains("Sana-1.6B").contains("127.0.0.1:9477");
        String top = cli().getUsageMessage();
        assertThat(top).contains("Sana-1.6B");
    }

    @Test
    void aSynopsisContinuesUnderItsFirstOption() {
        String estimate = cli().getSubcommands().get("estimate").getUsageMessage();
        List<String> lines = estimate.lines().toList();
        assertThat(lines.get(0)).startsWith("Usage: trainwatch estimate [-hV]");
        assertThat(lines.get(1)).startsWith(" ".repeat("Usage: trainwatch estimate ".length()) + "[");
    }
}
