package dev.trainwatch.exposition;

/** Any string as a safe Prometheus label value: printable ASCII ({@code _} else), at most 128 characters. */
public final class LabelValues {
    /** Longest label value exported. */
    public static final int MAX_LENGTH = 128;

    private LabelValues() {
    }

    public static String sanitize(String value) {
        if (value == null || value.isEmpty()) {
            return "";
        }
        int length = Math.min(value.length(), MAX_LENGTH);
        boolean clean = value.length() <= MAX_LENGTH;
        for (int i = 0; i < length && clean; i++) {
            char c = value.charAt(i);
            clean = c >= 0x20 && c < 0x7f;
        }
        if (clean) {
            return value;
        }
        char[] out = new char[length];
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            out[i] = c >= 0x20 && c < 0x7f ? c : '_';
        }
        return new String(out);
    }
}
