package dev.trainwatch.cli.watch;

import java.io.PrintWriter;
import java.util.List;

/**
 * Keeps a block of status lines in place at the bottom of a terminal: each repaint moves the cursor back over
 * the previous block (ANSI "cursor up" and "erase line") and writes the new one. Only for a real terminal; a
 * pipe or file gets nothing from here. Thread-safe.
 */
public final class TerminalStatus {

    private final PrintWriter out;
    private int drawn;

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
    }

    /** Leaves the last block on screen; the next output starts below it. */
    public synchronized void release() {
        drawn = 0;
    }
}
