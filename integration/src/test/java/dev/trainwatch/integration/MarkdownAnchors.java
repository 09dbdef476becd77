package dev.trainwatch.integration;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/** The anchors GitHub-flavoured Markdown gives headings: lower case, punctuation dropped, spaces to hyphens. */
final class MarkdownAnchors {
    private MarkdownAnchors() {}

    static Set<String> of(String markdown) {
        Set<String> anchors = new LinkedHashSet<>();
        boolean inFence = false;
        for (String line : markdown.split("\n")) {
            if (line.startsWith("```")) {
                inFence = !inFence;
            }
            if (!inFence && line.startsWith("#")) {
                String text = line.replaceFirst("^#+\\s*", "").strip().toLowerCase(Locale.ROOT);
                anchors.add(text.replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'));
            }
        }
        return anchors;
    }
}
