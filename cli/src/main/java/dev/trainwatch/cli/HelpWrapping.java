package dev.trainwatch.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.IHelpSectionRenderer;

/**
 * Help text wrapped at spaces only (the JDK's rules break tokens users copy, "127.0.0.1:⏎9477"): picocli renders each
 * section unwrapped and the lines are wrapped here, keeping picocli's continuation indents.
 */
final class HelpWrapping {
    /** Width of the help text, picocli's default. */
    static final int WIDTH = 80;
    /** What picocli renders to before the lines are wrapped here: wide enough that it wraps nothing. */
    private static final int UNWRAPPED = 2_000;
    /** An option or command row: indent, the names (single spaces inside), at least two spaces, a description. */
    private static final Pattern ROW = Pattern.compile("^( +\\S+(?: \\S+)*? {2,})\\S");

    private HelpWrapping() {}

    /** Applies to {@code cli} and every subcommand. */
    static void install(CommandLine cli) {
        cli.getCommandSpec().usageMessage().width(UNWRAPPED);
        Map<String, IHelpSectionRenderer> sections = new LinkedHashMap<>(cli.getHelpSectionMap());
        sections.replaceAll((key, renderer) -> {
            if (key.equals(CommandLine.Model.UsageMessageSpec.SECTION_KEY_SYNOPSIS)) {
                // The synopsis follows the "Usage: " heading on its line and continues under its first option.
                return help -> {
                    String synopsis = renderer.render(help);
                    String heading = help.commandSpec().usageMessage().synopsisHeading();
                    int offset = heading.length() - heading.stripLeading().length() + heading.strip().length() + 1;
                    return wrap(synopsis, offset, offset + help.commandSpec().qualifiedName().length() + 1);
                };
            }
            return help -> wrap(renderer.render(help), 0, -1);
        });
        cli.setHelpSectionMap(sections);
        cli.getSubcommands().values().forEach(HelpWrapping::install);
    }

    /** Wraps each line at spaces to {@link #WIDTH}; {@code indent} -1 takes the continuation indent from the layout. */
    static String wrap(String text, int firstOffset, int indent) {
        StringBuilder out = new StringBuilder(text.length() + 64);
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            if (i > 0) {
                out.append('\n');
            }
            int offset = i == 0 ? firstOffset : 0;
            wrapLine(lines[i], offset, indent >= 0 ? indent : continuationIndent(lines[i]), out);
        }
        return out.toString();
    }

    private static int continuationIndent(String line) {
        Matcher row = ROW.matcher(line);
        if (row.find()) {
            return row.group(1).length() + 2;
        }
        int leading = leadingSpaces(line);
        return leading == 0 ? 0 : leading + 2;
    }

    private static void wrapLine(String line, int offset, int indent, StringBuilder out) {
        if (offset + line.length() <= WIDTH) {
            out.append(line); // untouched, trailing spaces included (a heading such as "Usage: ")
            return;
        }
        String rest = line.stripTrailing();
        boolean first = true;
        while (true) {
            String prefix = first ? "" : " ".repeat(indent);
            int room = WIDTH - (first ? offset : prefix.length());
            if (rest.length() <= room) {
                out.append(prefix).append(rest);
                return;
            }
            // The last space that leaves the line within the width (not one of the line's own indentation).
            int start = first ? leadingSpaces(rest) : 0;
            int cut = rest.lastIndexOf(' ', room);
            if (cut <= start) {
                cut = rest.indexOf(' ', room); // a token longer than the line: keep it whole
                if (cut < 0) {
                    out.append(prefix).append(rest);
                    return;
                }
            }
            out.append(prefix).append(rest, 0, cut).append('\n');
            rest = rest.substring(cut).stripLeading();
            first = false;
        }
    }

    private static int leadingSpaces(String s) {
        return s.length() - s.stripLeading().length();
    }
}
