package dev.trainwatch.estimator;

import java.util.Arrays;
import dev.trainwatch.estimator.Tensor.Role;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What the estimator needs from a model whatever the run: tensors, parameters, optimizer state. Immutable. */
final class ModelProfile {

    final ModelInfo info;
    final List<Tensor> tensors;
    final long params;
    final long trainableParams;
    /** Parameters held in 4-D [O, I, 1, 1] conv weights (where factored optimizers lose their advantage). */
    final long pointwiseConvParams;
    final long imageTokenWeights;
    final long textTokenWeights;
    final long jointTokenWeights;
    final long sampleWeights;
    /** Parameters of the largest single block (ZeRO-3 gathers one at a time). */
    final long largestBlockParams;
    /** Parameters of all repeated transformer blocks together (what block swapping can move off the GPU). */
    final long allBlockParams;
    /** Transformer blocks, all groups together. */
    final int blocks;
    /** Parameters held in matrices (Linear and 1x1 conv weights): what a base-weight quantiser converts. */
    final long matrixParams;
    private final Map<String, Long> optimizerBytes = new HashMap<>();

    ModelProfile(ModelInfo info) {
        this.info = info;
        this.tensors = Architecture.tensors(info);
        long all = 0;
        long trainable = 0;
        long pointwise = 0;
        long[] perRole = new long[Role.values().length];
        long blockParams = 0;
        long allBlocks = 0;
        long matrices = 0;
        for (Tensor t : tensors) {
            all += t.totalNumel();
            if (t.trainable()) {
                trainable += t.totalNumel();
            }
            long[] s = t.shape();
            if (s.length == 4 && s[2] == 1 && s[3] == 1) {
                pointwise += t.totalNumel();
            }
            perRole[t.role().ordinal()] += t.totalNumel();
            if (Trainable.isMatrix(t)) {
                matrices += t.totalNumel();
            }
            if (t.count() > 1) {
                allBlocks += t.totalNumel();
                blockParams += t.numel();
            }
        }
        this.params = all;
        this.trainableParams = trainable;
        this.pointwiseConvParams = pointwise;
        this.imageTokenWeights = perRole[Role.IMAGE_TOKEN.ordinal()];
        this.textTokenWeights = perRole[Role.TEXT_TOKEN.ordinal()];
        this.jointTokenWeights = perRole[Role.JOINT_TOKEN.ordinal()];
        this.sampleWeights = perRole[Role.SAMPLE.ordinal()];
        this.largestBlockParams = blockParams;
        this.allBlockParams = allBlocks;
        this.matrixParams = matrices;
        this.blocks = Arrays.stream(Architecture.groupDepths(info)).sum();
        for (String optimizer : OptimizerState.OPTIMIZERS) {
            optimizerBytes.put(optimizer, tensors.stream().filter(Tensor::trainable)
                    .mapToLong(t -> OptimizerState.bytes(optimizer, t.shape()) * t.count()).sum());
        }
    }

    long optimizerBytes(String optimizer) {
        return optimizerBytes.get(optimizer);
    }
}
