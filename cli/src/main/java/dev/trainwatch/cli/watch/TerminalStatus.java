package dev.trainwatch.cli.watch;

import java.io.PrintWriter;
import java.util.List;

/** Keeps a block of status lines at the bottom of a real terminal, redrawn with ANSI cursor-up and erase. Thread-safe. */
public final class TerminalStatus {

    private final PrintWriter out;
    private int drawn;
    private List<String> last = List.of();

    public TerminalStatus(PrintWriter out) {
        this.out = out;
    }

    /** Replaces the block with {@code lines}. */
    public synchronized void paint(List<String> lines) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < drawn; i++) {
            b.append("\033[1A\033[2K\r");
        }
        for (String line : lines) {
            b.append(line).append('\n');
        }
        out.print(b);
        out.flush();
        drawn = lines.size();
        last = List.copyOf(lines);
    }

    /** Prints {@code line} above the block (e.g. an alert), keeping the block at the bottom. */
    public synchronized void printAbove(String line) {
        List<String> block = last;
        paint(List.of());
        out.println(line);
        paint(block);
    }

    /** Leaves the last block on screen; the next output starts below it. */
    public synchronized void release() {
        drawn = 0;
    }
}
