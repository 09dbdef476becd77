package dev.trainwatch.estimator;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Optimizer state bytes counted per tensor shape, the way each implementation allocates it. Stateless.
 *
 * <ul>
 *   <li>{@code adamw}: exp_avg and exp_avg_sq in fp32, 8 bytes per element.</li>
 *   <li>{@code adamw8bit} (bitsandbytes): both moments 1 byte per element plus an fp32 absmax per 2048-element
 *       block; tensors under 4096 elements stay 32-bit.</li>
 *   <li>{@code came} (came_pytorch): a full fp32 exp_avg; tensors of rank ≥ 2 keep row and column factors of the
 *       second moment and of the residual over the <em>last two</em> dims (rows = all dims but the last,
 *       columns = all but the second-to-last). For a 4-D [O, I, 1, 1] conv weight that makes each factor O·I
 *       elements: 4 + 16 = 20 bytes per element, more than AdamW. Vectors keep a full exp_avg_sq.</li>
 *   <li>{@code came8bit}: CAME with each state tensor of ≥ 4096 elements quantised to 1 byte (+ block absmax).</li>
 *   <li>{@code adafactor}: no first moment; factored second moment like CAME's, full for vectors.</li>
 *   <li>{@code sgd}: one fp32 momentum buffer.</li>
 *   <li>{@code prodigy} (prodigyopt): exp_avg, exp_avg_sq, the running sum {@code s} and the initial weights
 *       {@code p0}, each the size of the parameter: 16 bytes per fp32 element.</li>
 *   <li>{@code lion} (lion-pytorch, bitsandbytes Lion32bit): one fp32 exp_avg.</li>
 *   <li>{@code lion8bit} (bitsandbytes): that moment at 1 byte per element plus the block absmax; small tensors
 *       stay 32-bit.</li>
 * </ul>
 */
final class OptimizerState {

    static final List<String> OPTIMIZERS = List.of("adamw", "adamw8bit", "came", "came8bit", "adafactor", "sgd",
            "prodigy", "lion", "lion8bit");

    /** bitsandbytes keeps tensors smaller than this in 32-bit. */
    private static final long MIN_8BIT_SIZE = 4096;
    private static final long QUANT_BLOCK = 2048;

    private OptimizerState() {
    }

    static String normalize(String optimizer) {
        String o = optimizer.strip().toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
        return switch (o) {
            case "adam", "adamw", "fusedadam", "fusedadamw" -> "adamw";
            case "adamw8bit", "adam8bit", "bnbadamw8bit", "8bitadamw" -> "adamw8bit";
            case "came", "camewrapper" -> "came";
            case "came8bit", "came8bitwrapper" -> "came8bit";
            case "adafactor" -> "adafactor";
            case "sgd" -> "sgd";
            case "prodigy", "prodigyopt", "prodigyplusschedulefree" -> "prodigy";
            case "lion", "lion32bit", "lionpytorch" -> "lion";
            case "lion8bit", "bnblion8bit", "pagedlion8bit" -> "lion8bit";
            default -> null;
        };
    }

    /** State bytes of one tensor of this shape. */
    static long bytes(String optimizer, long[] shape) {
        long n = product(shape, 0, shape.length);
        return switch (optimizer) {
            case "adamw" -> 8 * n;
            case "adamw8bit" -> n < MIN_8BIT_SIZE ? 8 * n : 2 * n + 2 * 4 * ceilDiv(n, QUANT_BLOCK);
            case "sgd", "lion" -> 4 * n;
            case "prodigy" -> 16 * n;
            case "lion8bit" -> quantised(n);
            case "came" -> 4 * n + secondMoment(shape, true, false);
            case "came8bit" -> quantised(n) + secondMoment(shape, true, true);
            case "adafactor" -> secondMoment(shape, false, false);
            default -> throw new IllegalArgumentException("unknown optimizer " + optimizer);
        };
    }

    /**
     * Second-moment state: factored for rank ≥ 2 (CAME also keeps factored residual statistics), full otherwise.
     */
    private static long secondMoment(long[] shape, boolean withResidual, boolean quantise) {
        long n = product(shape, 0, shape.length);
        if (shape.length < 2) {
            return quantise ? quantised(n) : 4 * n;
        }
        // Last-two-dims factoring: rows over all dims but the last, columns over all but the second-to-last.
        long rows = product(shape, 0, shape.length - 1);
        long[] colShape = shape.clone();
        colShape[shape.length - 2] = 1;
        long cols = product(colShape, 0, colShape.length);
        int copies = withResidual ? 2 : 1;
        long perCopy = quantise ? quantised(rows) + quantised(cols) : 4 * (rows + cols);
        return copies * perCopy;
    }

    private static long quantised(long n) {
        return n < MIN_8BIT_SIZE ? 4 * n : n + 4 * ceilDiv(n, QUANT_BLOCK);
    }

    private static long product(long[] shape, int from, int to) {
        return Arrays.stream(shape, from, to).reduce(1, (a, b) -> a * b);
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
