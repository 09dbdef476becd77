package dev.trainwatch.cli;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Removes a temporary directory tree, best effort (what stays is under the system's temp dir). Through java.io.File,
 * not Files.walk: the agent's class-data archive run ({@link AgentClassTraining}) loads no file-tree stream.
 */
final class TempDirs {

    private TempDirs() {
    }

    static void deleteQuietly(Path dir) {
        delete(dir.toFile());
    }

    /** A link is removed, never followed. */
    private static void delete(File file) {
        File[] children = Files.isSymbolicLink(file.toPath()) ? null : file.listFiles();
        if (children != null) {
            for (File child : children) {
                delete(child);
            }
        }
        file.delete();
    }
}
