package dev.trainwatch.agent.k8s;

/**
 * Who a process is on Kubernetes. Immutable.
 *
 * @param namespace the pod's namespace
 * @param pod       the pod's name
 * @param podUid    the pod's UID
 * @param container the container's name, or null when the node does not say which container of the pod it is
 */
public record PodIdentity(String namespace, String pod, String podUid, String container) {
}
