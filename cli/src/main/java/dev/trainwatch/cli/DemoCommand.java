package dev.trainwatch.cli;

import dev.trainwatch.cli.demo.DemoStack;
import dev.trainwatch.cli.demo.Scenario;
import dev.trainwatch.collector.config.CollectorConfig;
import dev.trainwatch.collector.CollectorServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code trainwatch demo}: the whole stack on bundled, clearly labelled synthetic scenarios, for a machine
 * without an NVIDIA GPU. Runs until interrupted.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Runs the collector and its page on five bundled synthetic training runs (no GPU needed): a "
                + "healthy DiT-XL/2, PixArt-Σ starved for input (a slow data loader, T5/VAE features encoded online), "
                + "Sana-1.6B creeping towards OOM, a Flux.1-dev LoRA on one RTX 4090 running as predicted, "
                + "and an 8-GPU run with a thermally throttled straggler. Every demo run is labelled synthetic.")
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @picocli.CommandLine.ParentCommand
    TrainwatchCommand parent;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:9477",
            description = "Address of the page and API (default: ${DEFAULT-VALUE}; when it is taken and was not"
                    + " given, a free port; port 0 picks a free one). Other than loopback needs --token-file.")
    String listen;

    @Mixin
    CollectorOptions collectorOptions = new CollectorOptions();

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Keep the collector's history here (default: none).")
    Path dataDir;

    @Option(names = "--speed", paramLabel = "X", defaultValue = "1",
            description = "Run the scenarios and the collector's clock X times as fast (0.1–20, default: ${DEFAULT-VALUE}).")
    double speed;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CollectorConfig config;
        try {
            config = CollectorConfig.defaults().withListen(listen);
        } catch (IllegalArgumentException e) {
            throw new UserError(ExitCodes.USAGE, "--listen: " + e.getMessage());
        }
        config = collectorOptions.applyTo(config.withDataDir(dataDir));
        boolean listenGiven = spec.commandLine().getParseResult() != null
                && spec.commandLine().getParseResult().hasMatchedOption("--listen");
        DemoStack demo;
        try {
            demo = DemoStack.start(config, !listenGiven && config.port() != 0, speed, err);
        } catch (CollectorServer.StartException e) {
            throw new UserError(ExitCodes.FAILURE, e.getMessage());
        } catch (IOException e) {
            throw new UserError(ExitCodes.FAILURE, "the demo could not feed its collector: " + e.getMessage());
        }
        TrainwatchCommand.bindLogMetrics(parent, demo.server().metrics().registry());
        CountDownLatch stopped = new CountDownLatch(1);
        // SIGTERM and Ctrl-C stop the demo from here, feed first, then the collector: in shutdown hooks, which run
        // together, the collector could close under a feed still running ("feeding the collector failed").
        StopSignals.install(stopped::countDown);
        Thread hook = new Thread(demo::close, "trainwatch-demo-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("trainwatch demo: SYNTHETIC data from bundled scenarios, not a real training run");
        if (demo.pageUri().getPort() != config.port() && config.port() != 0) {
            out.println("  (" + config.host() + ":" + config.port() + " is taken, so the demo listens on port "
                    + demo.pageUri().getPort() + ")");
        }
        out.println("  page     " + demo.pageUri());
        out.println("  API      " + demo.pageUri().resolve("v1/runs"));
        out.println("  metrics  " + demo.pageUri().resolve("metrics"));
        for (Scenario s : demo.scenarios()) {
            out.println("  run      " + s.runId() + "  " + s.title().replaceFirst("^synthetic \\(demo\\): ", ""));
        }
        out.println((speed == 1 ? "" : "Running " + speed + "× as fast. ")
                + "The first anomalies appear within about " + Math.max(1, Math.round(20 / speed)) + " s, the others"
                + " within about " + Math.max(1, Math.round(120 / speed)) + " s. Ctrl-C stops.");
        out.flush();
        stopped.await();
        demo.close();
        Runtime.getRuntime().removeShutdownHook(hook);
        return ExitCodes.OK;
    }
}
