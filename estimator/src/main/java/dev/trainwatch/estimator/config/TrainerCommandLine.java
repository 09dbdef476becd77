package dev.trainwatch.estimator.config;

import static dev.trainwatch.estimator.config.TrainerConfigs.text;
import static dev.trainwatch.estimator.config.TrainerConfigs.truthy;
import static dev.trainwatch.estimator.config.TrainerConfigs.whole;

import dev.trainwatch.estimator.catalog.Catalog;
import dev.trainwatch.protocol.RunSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A trainer's spec from its command line, as {@code /proc/PID/cmdline} holds it: through {@code torchrun},
 * {@code python -m torch.distributed.run}, {@code accelerate launch}, {@code deepspeed} and {@code python -u} to the
 * script, then kohya sd-scripts and musubi-tuner ({@code --config_file} TOML with the flags over it), ai-toolkit
 * ({@code run.py job.yaml}), OneTrainer ({@code train.py --config-path}), SimpleTuner ({@code train.py} with its
 * {@code config/config.json}) and diffusers' example scripts (flags). Stateless.
 */
public final class TrainerCommandLine {

    private static final Pattern PYTHON = Pattern.compile("python[0-9.]*");
    private static final Set<String> LAUNCHERS = Set.of("torchrun", "accelerate", "deepspeed",
            "torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch");
    /** Python options that take a value. */
    private static final Set<String> PYTHON_VALUED = Set.of("-X", "-W", "-c");
    /** musubi-tuner's scripts' network modules, which train from their caches. */
    private static final Map<String, String> MUSUBI_MODULES = Map.of("wan", "networks.lora_wan", "hv", "networks.lora",
            "qwen_image", "networks.lora_qwen_image", "zimage", "networks.lora_zimage", "fpack", "networks.lora");

    private TrainerCommandLine() {
    }

    /** The script a launcher runs, its arguments, and the launcher's own flags. */
    record Launch(String script, List<String> args, Map<String, Object> launcherFlags) {
    }

    /**
     * The spec a trainer's command line names, with what could not be mapped; empty when the program is not a trainer
     * trainwatch knows. The spec is null when the model could not be told (the notes say why).
     *
     * @param env      the process's environment (SimpleTuner's {@code CONFIG_PATH}, {@code ENV}); may be empty
     * @param catalogs asked for only once the program is a trainer (an agent loads the catalog for trainers alone)
     */
    public static Optional<ConfigReaders.Read> read(List<String> argv, Path cwd, Map<String, String> env,
                                                    Supplier<Catalog> catalogs) {
        Optional<Launch> launch = unwrap(argv);
        if (launch.isEmpty()) {
            return Optional.empty();
        }
        Launch l = launch.get();
        String name = l.script().substring(l.script().lastIndexOf('/') + 1).toLowerCase(Locale.ROOT);
        Map<String, Object> flags = flags(l.args());
        List<String> notes = new ArrayList<>();
        Path script = cwd.resolve(l.script());
        try {
            RunSpec spec;
            if (name.endsWith("train_network.py") || name.matches("(flux|sd3|sdxl|hv|wan)_train\\.py")) {
                spec = kohya(name, script, flags, l.launcherFlags(), cwd, catalogs.get(), notes);
            } else if (name.equals("run.py") && l.args().stream().anyMatch(a -> a.matches(".*\\.ya?ml"))) {
                String job = l.args().stream().filter(a -> a.matches(".*\\.ya?ml")).findFirst().orElseThrow();
                spec = file(cwd.resolve(job), catalogs.get(), notes);
            } else if (name.equals("train.py") && flags.get("config_path") != null) {
                spec = file(cwd.resolve(String.valueOf(flags.get("config_path"))), catalogs.get(), notes);
            } else if (name.equals("train.py") && simpleTunerConfig(cwd, env) != null) {
                spec = simpleTuner(simpleTunerConfig(cwd, env), flags, catalogs.get(), notes);
            } else if (name.startsWith("train") && flags.containsKey("pretrained_model_name_or_path")) {
                spec = diffusers(name, script, flags, l.launcherFlags(), catalogs.get());
            } else {
                return Optional.empty();
            }
            return Optional.of(new ConfigReaders.Read(spec.withNotes(notes), List.copyOf(notes)));
        } catch (ConfigException e) {
            notes.add(e.getMessage());
            return Optional.of(new ConfigReaders.Read(null, List.copyOf(notes)));
        }
    }

    /** Through the launchers and the interpreter to the script; empty when no Python script is run. */
    static Optional<Launch> unwrap(List<String> argv) {
        Map<String, Object> launcherFlags = new LinkedHashMap<>();
        int i = 0;
        while (i < argv.size()) {
            String arg = argv.get(i);
            String base = arg.substring(arg.lastIndexOf('/') + 1);
            if (PYTHON.matcher(base).matches()) {
                i++;
                while (i < argv.size() && argv.get(i).startsWith("-") && !argv.get(i).equals("-m")) {
                    i += PYTHON_VALUED.contains(argv.get(i)) ? 2 : 1;
                }
                if (i + 1 < argv.size() && argv.get(i).equals("-m")) {
                    String module = argv.get(i + 1);
                    if (!LAUNCHERS.contains(module)) {
                        return Optional.of(new Launch(module.replace('.', '/') + ".py", argv.subList(i + 2, argv.size()),
                                launcherFlags));
                    }
                    i += 1;
                    continue;
                }
                return i < argv.size() && argv.get(i).endsWith(".py")
                        ? Optional.of(new Launch(argv.get(i), argv.subList(i + 1, argv.size()), launcherFlags))
                        : Optional.empty();
            }
            if (LAUNCHERS.contains(base)) {
                int script = i + 1;
                while (script < argv.size() && !argv.get(script).endsWith(".py")) {
                    script++;
                }
                if (script >= argv.size()) {
                    return Optional.empty();
                }
                launcherFlags.putAll(flags(argv.subList(i + 1, script)));
                return Optional.of(new Launch(argv.get(script), argv.subList(script + 1, argv.size()), launcherFlags));
            }
            return base.endsWith(".py") ? Optional.of(new Launch(arg, argv.subList(i + 1, argv.size()), launcherFlags))
                    : Optional.empty();
        }
        return Optional.empty();
    }

    /**
     * {@code --name value}, {@code --name=value} and bare {@code --switch} (true), dashes in names as underscores;
     * numbers and true/false parsed; of a flag given several values, the first.
     */
    static Map<String, Object> flags(List<String> args) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (!a.startsWith("--") || a.length() == 2) {
                continue;
            }
            int eq = a.indexOf('=');
            String name = (eq < 0 ? a.substring(2) : a.substring(2, eq)).replace('-', '_');
            String value = eq >= 0 ? a.substring(eq + 1)
                    : i + 1 < args.size() && !args.get(i + 1).startsWith("--") ? args.get(++i) : null;
            out.put(name, value == null ? Boolean.TRUE : parse(value));
        }
        return out;
    }

    private static Object parse(String value) {
        if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(value);
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            try {
                return Double.parseDouble(value);
            } catch (NumberFormatException notNumber) {
                return value;
            }
        }
    }

    private static RunSpec kohya(String name, Path script, Map<String, Object> flags, Map<String, Object> launcher,
                                 Path cwd, Catalog catalog, List<String> notes) {
        Map<String, Object> settings = new LinkedHashMap<>();
        Object config = flags.get("config_file");
        if (config != null) {
            String file = String.valueOf(config).endsWith(".toml") ? String.valueOf(config) : config + ".toml";
            try {
                settings.putAll(TrainerConfigs.toml(cwd.resolve(file)));
            } catch (ConfigException e) {
                notes.add("config_file " + file + " not readable: " + e.reason() + "; the command line's flags only");
            }
        }
        settings.putAll(flags);
        settings.putIfAbsent("mixed_precision", launcher.get("mixed_precision"));
        String prefix = name.contains("_train") ? name.substring(0, name.indexOf("_train")) : "";
        if (MUSUBI_MODULES.containsKey(prefix)) {
            settings.putIfAbsent("network_module", MUSUBI_MODULES.get(prefix));
        }
        // A musubi script's network module names its architecture; "" keeps an SD/SDXL module from hinting one.
        String arch = prefix.equals("flux") || prefix.equals("sd3") ? prefix : MUSUBI_MODULES.containsKey(prefix)
                ? TrainerConfigs.kohyaArch(MUSUBI_MODULES.get(prefix), text(settings.get("task"))) : "";
        return TrainerConfigs.kohya(script, settings, cwd, arch, catalog, notes);
    }

    private static RunSpec file(Path config, Catalog catalog, List<String> notes) {
        ConfigReaders.Read read = ConfigReaders.readWithNotes(config, catalog);
        notes.addAll(read.notes());
        return read.spec();
    }

    /** SimpleTuner's config: {@code CONFIG_PATH}, else {@code config/$ENV/config.json}, else config/config.json. */
    private static Path simpleTunerConfig(Path cwd, Map<String, String> env) {
        String path = env.get("CONFIG_PATH") != null ? env.get("CONFIG_PATH")
                : env.get("ENV") != null ? "config/" + env.get("ENV") + "/config" : "config/config";
        Path file = cwd.resolve(path.endsWith(".json") ? path : path + ".json");
        return Files.isRegularFile(file) ? file : null;
    }

    private static RunSpec simpleTuner(Path config, Map<String, Object> flags, Catalog catalog, List<String> notes) {
        Map<String, Object> json = new LinkedHashMap<>(SimpleTunerConfig.read(config));
        json.putAll(flags);
        if (!SimpleTunerConfig.is(json)) {
            throw new ConfigException(config, 0, "no model_family: not a SimpleTuner config trainwatch can read");
        }
        return SimpleTunerConfig.spec(config, json, catalog, notes);
    }

    /** diffusers' example scripts ({@code train_dreambooth_lora_flux.py}, …): their flags; LoRA rank 4, their default. */
    private static RunSpec diffusers(String name, Path script, Map<String, Object> f, Map<String, Object> launcher,
                                     Catalog catalog) {
        String modelId = TrainerConfigs.modelId(script, catalog, text(f.get("pretrained_model_name_or_path")), null);
        Integer rank = !name.contains("lora") ? null : f.get("rank") == null ? 4 : whole(script, f.get("rank"), "--rank");
        String precision = text(f.get("mixed_precision") != null ? f.get("mixed_precision") : launcher.get("mixed_precision"));
        String optimizer = truthy(f.get("use_8bit_adam")) ? "adamw8bit" : TrainerConfigs.optimizer(text(f.get("optimizer")));
        return new RunSpec(modelId, null, null, whole(script, f.get("train_batch_size"), "--train_batch_size"),
                TrainerConfigs.largestSide(script, f.get("resolution")), null, null, null,
                TrainerConfigs.precision(precision), optimizer, truthy(f.get("gradient_checkpointing")), null, null, null,
                null, whole(script, f.get("gradient_accumulation_steps"), "--gradient_accumulation_steps"),
                TrainerConfigs.longOrNull(f.get("max_train_steps")))
                .withRegime(null, truthy(f.get("cache_latents")) ? "precomputed" : "online", null, null, null, null)
                .withPhysics(null, null, rank, null, null, null)
                .withSampling(f.get("validation_prompt") == null ? null
                        : whole(script, f.get("validation_steps"), "--validation_steps"));
    }
}
