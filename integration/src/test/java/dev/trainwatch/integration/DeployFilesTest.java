package dev.trainwatch.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The deployment files in {@code deploy/}: accepted by the real tools that will read them (promtool, amtool,
 * bash, systemd-analyze where present) and consistent with the rules (job names, severities, GPU access).
 */
class DeployFilesTest {
    private static final Duration TIMEOUT = Duration.ofMinutes(1);

    private static Path deploy(String file) {
        return ProjectFiles.root().resolve("deploy").resolve(file);
    }

    @Test
    void prometheusConfigIsValidAndItsJobMatchesTheHealthAlerts() {
        Path promtool = ExternalCommand.require("promtool", "prometheus");
        ExternalCommand.Result result = ExternalCommand.run(TIMEOUT, ProjectFiles.root(),
                List.of(promtool.toString(), "check", "config", deploy("prometheus.yml").toString()));
        assertEquals(0, result.exitCode(), () -> "promtool check config failed:\n" + result.output());

        JsonNode config = RuleFiles.readYaml(deploy("prometheus.yml"));
        assertThat(config.path("scrape_configs")).anySatisfy(job ->
                assertThat(job.path("job_name").asText()).matches("trainwatch.*"));
        assertThat(config.path("global").path("scrape_interval").asText()).isEqualTo("15s");
        // Every node's agent is scraped too, under the job name the rules and dashboards know (issue #45).
        assertThat(config.path("scrape_configs")).anySatisfy(job ->
                assertThat(job.path("job_name").asText()).isEqualTo("trainwatch-agent"));
        assertThat(ProjectFiles.read(deploy("kubernetes/trainwatch.yaml"))).contains("- --listen=0.0.0.0:9478",
                "kind: PodMonitor", "replacement: trainwatch-agent");
        assertThat(ProjectFiles.read(deploy("systemd/trainwatch-agent.service"))).contains("--listen 0.0.0.0:9478");
    }

    @Test
    void alertmanagerConfigIsValidAndRoutesBySeverity() {
        Path amtool = ExternalCommand.require("amtool", "prometheus-alertmanager");
        String config = deploy("alertmanager.yml").toString();
        ExternalCommand.Result check = ExternalCommand.run(TIMEOUT, ProjectFiles.root(),
                List.of(amtool.toString(), "check-config", config));
        assertEquals(0, check.exitCode(), () -> "amtool check-config failed:\n" + check.output());

        Map<String, String> expected = Map.of("critical", "gpu-oncall-pager", "warning", "ml-team-chat",
                "info", "ml-team-low-priority");
        expected.forEach((severity, receiver) -> {
            ExternalCommand.Result route = ExternalCommand.run(TIMEOUT, ProjectFiles.root(), List.of(amtool.toString(),
                    "config", "routes", "test", "--config.file=" + config, "alertname=TrainwatchGpuLost",
                    "severity=" + severity));
            assertEquals(0, route.exitCode(), route::output);
            assertThat(route.output()).as("receiver for severity " + severity).contains(receiver);
        });
    }

    @Test
    void kubernetesAgentSeesHostProcessesAndAllGpusWithoutTakingAny() throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (MappingIterator<JsonNode> it = RuleFiles.YAML.readerFor(JsonNode.class)
                .readValues(deploy("kubernetes/trainwatch.yaml").toFile())) {
            it.forEachRemaining(docs::add);
        }
        JsonNode daemonSet = kind(docs, "DaemonSet").orElseThrow();
        JsonNode pod = daemonSet.path("spec").path("template").path("spec");
        assertThat(pod.path("hostPID").asBoolean()).as("hostPID").isTrue();
        JsonNode agent = pod.path("containers").get(0);
        assertThat(agent.path("args").toString()).contains("agent", "--collector=");
        // Every node's agent sends to one collector: several polls per request, as docs/DEPLOY.md says.
        assertThat(agent.path("args").toString()).contains("--ship-every=10s");
        assertThat(agent.path("env").toString()).contains("NVIDIA_VISIBLE_DEVICES").contains("\"all\"");
        assertThat(agent.path("resources").toString()).as("the agent must not claim GPUs").doesNotContain("nvidia.com/gpu");
        assertThat(agent.path("securityContext").path("capabilities").path("add").toString())
                .contains("SYS_PTRACE");
        // Kubernetes attribution: the kubelet's log directories, mounted where the agent reads them, read-only
        for (String dir : List.of("/var/log/pods", "/var/log/containers")) {
            JsonNode mount = null;
            for (JsonNode m : agent.path("volumeMounts")) {
                if (m.path("mountPath").asText().equals(dir)) {
                    mount = m;
                }
            }
            assertThat(mount).as("volume mount " + dir).isNotNull();
            assertThat(mount.path("readOnly").asBoolean()).as(dir + " read-only").isTrue();
            String volume = mount.path("name").asText();
            JsonNode source = null;
            for (JsonNode v : pod.path("volumes")) {
                if (v.path("name").asText().equals(volume)) {
                    source = v;
                }
            }
            assertThat(source).as("volume " + volume).isNotNull();
            assertThat(source.path("hostPath").path("path").asText()).isEqualTo(dir);
        }

        JsonNode collector = kind(docs, "Deployment").orElseThrow().path("spec").path("template").path("spec")
                .path("containers").get(0);
        assertThat(collector.path("args").toString()).contains("collector", "--listen=0.0.0.0:9477", "--token-file=");

        JsonNode service = kind(docs, "Service").orElseThrow();
        assertThat(service.path("metadata").path("name").asText()).as("Service name = scrape job").matches("trainwatch.*");
        JsonNode monitor = kind(docs, "ServiceMonitor").orElseThrow();
        assertThat(monitor.path("spec").path("selector").path("matchLabels"))
                .isEqualTo(service.path("metadata").path("labels"));
        String port = monitor.path("spec").path("endpoints").get(0).path("port").asText();
        assertThat(service.path("spec").path("ports").get(0).path("name").asText()).isEqualTo(port);
    }

    @Test
    void slurmScriptsAreValidBashAndNeverFailTheJob() {
        for (String script : List.of("slurm/prolog.sh", "slurm/epilog.sh")) {
            ExternalCommand.Result syntax = ExternalCommand.run(TIMEOUT, ProjectFiles.root(),
                    List.of("bash", "-n", deploy(script).toString()));
            assertEquals(0, syntax.exitCode(), () -> script + ": " + syntax.output());
            assertThat(ProjectFiles.read(deploy(script)).strip()).as(script + " ends with exit 0").endsWith("exit 0");
        }
        // A job that did not ask for trainwatch: the prolog does nothing and succeeds, without systemd at hand.
        ExternalCommand.Result skipped = ExternalCommand.run(TIMEOUT, ProjectFiles.root(),
                List.of("env", "-i", "SLURM_JOB_ID=42", "SLURM_JOB_COMMENT=", "bash", deploy("slurm/prolog.sh").toString()));
        assertEquals(0, skipped.exitCode(), skipped::output);
        assertThat(skipped.output()).isEmpty();
    }

    @Test
    void systemdUnitsRunTheRightCommands(@org.junit.jupiter.api.io.TempDir Path tmp) throws IOException {
        String agent = ProjectFiles.read(deploy("systemd/trainwatch-agent.service"));
        String collector = ProjectFiles.read(deploy("systemd/trainwatch-collector.service"));
        assertThat(agent).contains("ExecStart=/opt/trainwatch/trainwatch agent", "--collector ", "CAP_SYS_PTRACE",
                "CacheDirectory=");
        // Beyond loopback the collector refuses to start without a token: the unit must pass one.
        assertThat(collector).contains("trainwatch-all.jar collector", "--listen 0.0.0.0:9477", "--data-dir ",
                "--token-file ");
        Optional<Path> analyze = ExternalCommand.find("systemd-analyze");
        // systemd-analyze is part of systemd; on a machine without it the structural checks above still run.
        analyze.ifPresent(tool -> {
            for (String unit : List.of("systemd/trainwatch-agent.service", "systemd/trainwatch-collector.service")) {
                // verify also wants the command to exist: the installed launcher is this checkout's.
                Path copy = tmp.resolve(deploy(unit).getFileName());
                try {
                    java.nio.file.Files.writeString(copy, ProjectFiles.read(deploy(unit)).replace(
                            "/opt/trainwatch/trainwatch ", ProjectFiles.root().resolve("trainwatch") + " "));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                ExternalCommand.Result verify = ExternalCommand.run(TIMEOUT, ProjectFiles.root(),
                        List.of(tool.toString(), "verify", copy.toString()));
                assertEquals(0, verify.exitCode(), () -> unit + ":\n" + verify.output());
            }
        });
    }

    @Test
    void deployMdInstallsWhatTheUnitsAndTheSlurmPrologExpect() {
        String deployMd = ProjectFiles.read(ProjectFiles.docs("DEPLOY.md"));
        for (String unit : List.of("systemd/trainwatch-agent.service", "systemd/trainwatch-collector.service")) {
            java.util.regex.Matcher doc = java.util.regex.Pattern.compile("Documentation=file://(/\\S+)/([\\w.]+)")
                    .matcher(ProjectFiles.read(deploy(unit)));
            assertThat(doc.find()).as(unit + " names its documentation").isTrue();
            assertThat(deployMd).as("DEPLOY.md installs " + doc.group(1))
                    .contains("install -m 0644 docs/*.md " + doc.group(1) + "/");
            assertThat(ProjectFiles.docs(doc.group(2))).exists();
        }
        // The unit and the prolog start the launcher installed next to the jar: DEPLOY.md installs it there.
        assertThat(deployMd).contains("install -D -m 0644 cli/target/trainwatch-all.jar /opt/trainwatch/trainwatch-all.jar",
                "install -m 0755 trainwatch /opt/trainwatch/trainwatch");
        // The prolog runs the agent as user and group trainwatch, reading the token: DEPLOY.md creates both.
        String prolog = ProjectFiles.read(deploy("slurm/prolog.sh"));
        assertThat(prolog).contains("--uid=trainwatch --gid=trainwatch", "--token-file /etc/trainwatch/token");
        assertThat(deployMd).contains("useradd --system --user-group", "chgrp trainwatch /etc/trainwatch/token",
                "chmod 0640 /etc/trainwatch/token");
    }

    /** The JVM settings measured in docs/PERFORMANCE.md, the same wherever the product is started. */
    private static final String AGENT_JVM = "-Xms8m -Xmx32m -Xmn1m -XX:SurvivorRatio=4 -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1"
            + " -Xss512k -XX:ReservedCodeCacheSize=16m -XX:MaxMetaspaceSize=64m -XX:-UsePerfData"
            + " -XX:+IgnoreUnrecognizedVMOptions -XX:TrimNativeHeapInterval=30000"
            + " -XX:Tier0InvokeNotifyFreqLog=3 -XX:Tier0BackedgeNotifyFreqLog=7 -XX:Tier3InvocationThreshold=20"
            + " -XX:Tier3MinInvocationThreshold=10 -XX:Tier3CompileThreshold=200 -XX:Tier3BackEdgeThreshold=6000"
            + " -XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=10000 -XX:AsyncDeflationInterval=10000";
    private static final String COLLECTOR_JVM = "-Xms64m -Xmx384m -Xmn32m -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=20"
            + " -XX:+UseSerialGC -Xss512k -XX:-UsePerfData -XX:+IgnoreUnrecognizedVMOptions"
            + " -XX:TrimNativeHeapInterval=30000";

    @Test
    void everyLauncherGivesTheAgentAndTheCollectorTheirMeasuredJvmSettings() {
        String launcher = ProjectFiles.read(ProjectFiles.root().resolve("trainwatch"));
        assertThat(launcher).contains("agent) TRAINWATCH_JAVA_OPTS=\"" + AGENT_JVM + "\"")
                .contains("collector|watch|run|demo) TRAINWATCH_JAVA_OPTS=\""
                        + COLLECTOR_JVM.replace("-Xmx384m", "-Xmx$(collector_heap_mb \"$@\")m") + "\"");
        // The agent starts through the installed launcher everywhere (its settings, its class archive), with no JVM
        // options of its own that would replace the launcher's.
        assertThat(ProjectFiles.read(deploy("systemd/trainwatch-agent.service")))
                .contains("ExecStart=/opt/trainwatch/trainwatch agent").doesNotContain("-Xmx", "TRAINWATCH_JAVA_OPTS");
        assertThat(ProjectFiles.read(deploy("systemd/trainwatch-collector.service")))
                .contains("/usr/bin/java " + COLLECTOR_JVM + " -jar");
        assertThat(ProjectFiles.read(deploy("slurm/prolog.sh")).replaceAll("\\\\\n\\s*", ""))
                .contains("TRAINWATCH_LAUNCHER:-/opt/trainwatch/trainwatch}", "\"$TRAINWATCH_LAUNCHER\" agent",
                        "CacheDirectory=").doesNotContain("-Xmx", "TRAINWATCH_JAVA_OPTS");
        String kubernetes = ProjectFiles.read(deploy("kubernetes/trainwatch.yaml")).replaceAll("\\s+", " ");
        assertThat(kubernetes).contains("command: [java, " + COLLECTOR_JVM.replace(" ", ", ") + ", -jar,")
                .contains("command: [/opt/trainwatch/trainwatch] args: - agent");
        String dockerfile = ProjectFiles.read(deploy("kubernetes/Dockerfile"));
        assertThat(dockerfile).contains("COPY trainwatch /opt/trainwatch/trainwatch", "TRAINWATCH_CACHE_DIR=",
                "/opt/trainwatch/trainwatch agent --help");
        assertThat(ProjectFiles.read(ProjectFiles.docs("PERFORMANCE.md"))).contains(COLLECTOR_JVM).contains(AGENT_JVM);
    }

    /** The launcher sizes the collector's heap from --max-gpus: the measured 384 MB at the default 4,096 GPUs. */
    @Test
    void theLaunchersCollectorHeapFollowsTheGpuCap() throws Exception {
        String launcher = ProjectFiles.read(ProjectFiles.root().resolve("trainwatch"));
        String function = launcher.substring(launcher.indexOf("collector_heap_mb() {"),
                launcher.indexOf("\n}\n", launcher.indexOf("collector_heap_mb() {")) + 3);
        ExternalCommand.Result result = ExternalCommand.run(Duration.ofSeconds(30), ProjectFiles.root(), List.of("bash",
                "-c", function + "collector_heap_mb collector; collector_heap_mb collector --max-gpus 16384;"
                        + " collector_heap_mb collector --max-gpus=65536; collector_heap_mb collector --max-gpus x"));
        assertThat(result.output().strip().split("\\s+")).containsExactly("384", "1152", "4224", "384");
    }

    private static Optional<JsonNode> kind(List<JsonNode> docs, String kind) {
        return docs.stream().filter(d -> d.path("kind").asText().equals(kind)).findFirst();
    }
}
