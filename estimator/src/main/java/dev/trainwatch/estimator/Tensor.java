package dev.trainwatch.estimator;

import java.util.Arrays;

/**
 * One parameter tensor of a model (repeated {@code count} times, e.g. once per block), with the rate at which a
 * forward pass multiplies by it. Immutable.
 *
 * @param name       dotted name, as in the PyTorch module
 * @param shape      tensor shape; optimizer state is counted per shape
 * @param count      how many tensors of this shape (blocks)
 * @param trainable  receives gradients (DiT's fixed sin-cos position table does not)
 * @param role       how often a forward pass uses each weight
 */
record Tensor(String name, long[] shape, int count, boolean trainable, Role role) {

    /** How often a forward pass multiplies by each weight: per image token, per text token, per sample, or not at all. */
    enum Role { IMAGE_TOKEN, TEXT_TOKEN, JOINT_TOKEN, SAMPLE, NONE }

    long numel() {
        return Arrays.stream(shape).reduce(1, (a, b) -> a * b);
    }

    long totalNumel() {
        return numel() * count;
    }
}
