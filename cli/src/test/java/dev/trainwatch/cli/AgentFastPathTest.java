package dev.trainwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * A plain {@code trainwatch agent} command line read without picocli gives the command exactly the fields picocli
 * gives it (and the same log settings {@code main} takes); everything else is left to picocli.
 */
class AgentFastPathTest {

    /** What picocli makes of {@code args}: the agent command's fields and main's log settings, as text. */
    private static String viaPicocli(String[] args) {
        CommandLine cli = TrainwatchCommand.newCommandLine(new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()));
        CommandLine.ParseResult parsed = cli.parseArgs(args);
        AgentCommand agent = parsed.subcommand().commandSpec().commandLine().getCommand();
        TrainwatchCommand top = cli.getCommand();
        return describe(agent) + " output=" + top.logFormat + " level=" + top.logLevel;
    }

    private static String viaFastPath(String[] args) {
        AgentFastPath.Parsed parsed = AgentFastPath.parse(args, System.getenv());
        return parsed == null ? null
                : describe(parsed.command) + " output=" + parsed.logFormat + " level=" + parsed.logLevel;
    }

    private static String describe(AgentCommand c) {
        return List.of("collector=" + c.collector, "attach=" + c.attachPid, "log=" + c.log, "format=" + c.logFormat,
                "run=" + c.runId, "interval=" + c.interval, "ship=" + c.shipEvery, "nvml=" + c.nvmlLibrary,
                "token=" + c.tokenFile, "spool=" + c.spoolDir, "max=" + c.spoolMaxMb, "host=" + c.host,
                "time=" + c.logTime, "once=" + c.once, "json=" + c.json, "cds=" + c.cdsTraining,
                "listen=" + c.listen).toString();
    }

    @Test
    void servicesCommandLinesReadAsPicocliReadsThem() {
        List<String[]> lines = List.of(
                new String[] {"agent", "--collector", "http://127.0.0.1:9477", "--interval", "1s", "--spool-dir",
                        "/var/lib/trainwatch-agent", "--token-file", "/run/credentials/token"},
                new String[] {"agent", "--collector=http://trainwatch.trainwatch.svc:9477", "--interval=1s",
                        "--spool-dir=/var/lib/trainwatch", "--token-file=/etc/trainwatch/token", "--host=node-7"},
                new String[] {"agent", "--collector", "http://c:9477", "--run-id", "12345", "--attach", "4242",
                        "--log", "/scratch/run/train.log", "--log-format", "pixart", "--log-time", "LOG",
                        "--spool-max-mb", "64", "--nvml-library", "/usr/lib/libnvidia-ml.so.1", "--interval", "500ms"},
                new String[] {"agent", "--collector", "http://c:9477", "--log-output", "json", "--log-level", "DEBUG"},
                new String[] {"agent", "--collector", "http://c:9477", "--ship-every", "5s", "--interval=500ms"},
                new String[] {"agent", "--collector", "http://c:9477", "--ship-every=10s"},
                new String[] {"agent", "--collector", "http://c:9477", "--listen", "0.0.0.0:9478"},
                new String[] {"agent", "--collector", "http://c:9477", "--log-output=JSON", "--log-level=warn"},
                new String[] {"agent", "--collector", "http://c:9477", "--log-format", "(?<step>\\d+) loss=(?<loss>\\S+)"},
                new String[] {"agent", "--collector", "http://c:9477", "--host", "a=b", "--run-id", "x y"},
                new String[] {"agent"},
                new String[] {"agent", "--cds-training"},
                new String[] {"agent", "--cds-training", "--nvml-library", "/x/libnvidia-ml.so.1"});
        for (String[] args : lines) {
            assertThat(viaFastPath(args)).as(String.join(" ", args)).isNotNull().isEqualTo(viaPicocli(args));
        }
    }

    @Test
    void anythingElseIsPicoclis() {
        Map<String, String> env = Map.of();
        for (String[] args : List.of(
                new String[] {}, new String[] {"agent", "--help"}, new String[] {"agent", "-h"},
                new String[] {"agent", "--version"}, new String[] {"agent", "-V"},
                new String[] {"agent", "--once"}, new String[] {"agent", "--once", "--json"},
                new String[] {"agent", "--cds-training", "--cds-training"}, new String[] {"agent", "--cds-training=true"}, new String[] {"--log-level", "debug", "agent"},
                new String[] {"gpus"}, new String[] {"Agent", "--collector", "http://c"},
                new String[] {"agent", "--collector"}, new String[] {"agent", "--collector", "a", "--collector", "b"},
                new String[] {"agent", "--collector", "--interval"}, new String[] {"agent", "--collector", ""},
                new String[] {"agent", "--collector="}, new String[] {"agent", "@args.txt"},
                new String[] {"agent", "--collector", "@file"}, new String[] {"agent", "--colector", "http://c"},
                new String[] {"agent", "--attach", "-1"}, new String[] {"agent", "--attach", "012"},
                new String[] {"agent", "--attach", "0x10"}, new String[] {"agent", "--attach", "9999999999999999999"},
                new String[] {"agent", "--spool-max-mb", "1e3"}, new String[] {"agent", "--log-level", "verbose"},
                new String[] {"agent", "--log-output", " json"}, new String[] {"agent", "http://c"},
                new String[] {"agent", "--", "--collector", "http://c"}, new String[] {"agent", "--collector", "a", "b"})) {
            assertThat(AgentFastPath.parse(args, env)).as(String.join(" ", args)).isNull();
        }
    }

    @Test
    void theEnvironmentsLogDefaultsAsPicocliTakesThem() {
        String[] args = {"agent", "--collector", "http://c:9477"};
        assertThat(AgentFastPath.parse(args, Map.of("TRAINWATCH_LOG_OUTPUT", "json", "TRAINWATCH_LOG_LEVEL", "Warn")))
                .satisfies(p -> {
                    assertThat(p.logFormat).hasToString("JSON");
                    assertThat(p.logLevel).hasToString("warn");
                });
        assertThat(AgentFastPath.parse(args, Map.of("TRAINWATCH_LOG_LEVEL", "loud"))).isNull();
        assertThat(AgentFastPath.parse(args, Map.of("TRAINWATCH_LOG_LEVEL", ""))).isNull();
        // An option on the command line wins over the environment, as with picocli's default value.
        List<String> withOption = new ArrayList<>(List.of(args));
        withOption.addAll(List.of("--log-level", "error"));
        assertThat(AgentFastPath.parse(withOption.toArray(String[]::new), Map.of("TRAINWATCH_LOG_LEVEL", "debug"))
                .logLevel).hasToString("error");
    }
}
