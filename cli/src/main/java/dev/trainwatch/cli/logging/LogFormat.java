package dev.trainwatch.cli.logging;

/** How log records are written: one line of text, or one JSON object per line (for Loki, Elasticsearch). */
public enum LogFormat {
    TEXT,
    JSON
}
