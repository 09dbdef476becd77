package dev.trainwatch.agent.k8s;

/** Who a process is on Kubernetes; {@code container} is null when the node does not say. */
public record PodIdentity(String namespace, String pod, String podUid, String container) {
}
