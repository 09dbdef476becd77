package dev.trainwatch.estimator;

import dev.trainwatch.estimator.Tensor.Role;
import dev.trainwatch.estimator.catalog.ModelInfo;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/** What the estimator needs from a model whatever the run: its tensors and parameter counts. Immutable. */
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
    /** Every parameter trained, optimizer states counted once: a bucketed spec resolves each of its buckets. */
    final Trainable all;
    /** Parameters held in matrices (Linear and 1x1 conv weights): what a base-weight quantiser converts. */
    final long matrixParams;

    ModelProfile(ModelInfo info) {
        this.info = info;
        this.tensors = Architecture.tensors(info);
        this.params = sum(t -> true, Tensor::totalNumel);
        this.trainableParams = sum(Tensor::trainable, Tensor::totalNumel);
        this.pointwiseConvParams = sum(t -> t.shape().length == 4 && t.shape()[2] == 1 && t.shape()[3] == 1,
                Tensor::totalNumel);
        this.imageTokenWeights = sum(t -> t.role() == Role.IMAGE_TOKEN, Tensor::totalNumel);
        this.textTokenWeights = sum(t -> t.role() == Role.TEXT_TOKEN, Tensor::totalNumel);
        this.jointTokenWeights = sum(t -> t.role() == Role.JOINT_TOKEN, Tensor::totalNumel);
        this.sampleWeights = sum(t -> t.role() == Role.SAMPLE, Tensor::totalNumel);
        this.largestBlockParams = sum(t -> t.count() > 1, Tensor::numel);
        this.allBlockParams = sum(t -> t.count() > 1, Tensor::totalNumel);
        this.matrixParams = sum(Trainable::isMatrix, Tensor::totalNumel);
        this.blocks = Arrays.stream(Architecture.groupDepths(info)).sum();
        this.all = Trainable.all(this);
    }

    private long sum(Predicate<Tensor> which, ToLongFunction<Tensor> size) {
        return tensors.stream().filter(which).mapToLong(size).sum();
    }
}
