package dev.trainwatch.collector.state;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What one GPU-hour costs, in whatever currency the operator thinks in: one price for every GPU, or prices by the
 * estimator's GPU id with an optional default ({@code a100-80gb=1.79,h100-sxm=2.49,*=2}). Immutable.
 */
public final class GpuHourPrices {

    /** No price: runs show GPU-hours and energy, no cost. */
    public static final GpuHourPrices NONE = new GpuHourPrices(Map.of(), Double.NaN);

    private static final double MAX_PRICE = 1_000_000;

    private final Map<String, Double> byGpu;
    private final double fallback;

    private GpuHourPrices(Map<String, Double> byGpu, double fallback) {
        this.byGpu = Map.copyOf(byGpu);
        this.fallback = fallback;
    }

    /**
     * Parses {@code 2.5} (every GPU) or {@code id=price[,id=price…]} with {@code *} for the rest.
     *
     * @throws IllegalArgumentException with a one-line message naming what is wrong
     */
    public static GpuHourPrices parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("a price per GPU-hour is empty");
        }
        Map<String, Double> byGpu = new LinkedHashMap<>();
        double fallback = Double.NaN;
        for (String part : text.split(",")) {
            String item = part.strip();
            int eq = item.indexOf('=');
            String id = eq < 0 ? "*" : item.substring(0, eq).strip().toLowerCase(Locale.ROOT);
            String value = eq < 0 ? item : item.substring(eq + 1).strip();
            if (id.isEmpty()) {
                throw new IllegalArgumentException("price '" + item + "' names no GPU before '='");
            }
            double price;
            try {
                price = Double.parseDouble(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("price '" + item + "' is not a number (e.g. 2.5 or a100-80gb=1.79)");
            }
            if (!(price >= 0) || price > MAX_PRICE) {
                throw new IllegalArgumentException("price '" + item + "' must be between 0 and " + (long) MAX_PRICE);
            }
            if (id.equals("*")) {
                if (!Double.isNaN(fallback)) {
                    throw new IllegalArgumentException("more than one price for every GPU in '" + text + "'");
                }
                fallback = price;
            } else if (byGpu.put(id, price) != null) {
                throw new IllegalArgumentException("GPU '" + id + "' is priced twice in '" + text + "'");
            }
        }
        return new GpuHourPrices(byGpu, fallback);
    }

    /** The price of one hour of GPU {@code gpuId} (the estimator's id, may be null); NaN when none applies. */
    public double price(String gpuId) {
        if (gpuId != null) {
            Double p = byGpu.get(gpuId.toLowerCase(Locale.ROOT));
            if (p != null) {
                return p;
            }
        }
        return fallback;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        byGpu.forEach((k, v) -> b.append(b.length() > 0 ? "," : "").append(k).append('=').append(v));
        if (!Double.isNaN(fallback)) {
            b.append(b.length() > 0 ? "," : "").append("*=").append(fallback);
        }
        return b.toString();
    }
}
