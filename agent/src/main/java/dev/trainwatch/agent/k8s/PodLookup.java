package dev.trainwatch.agent.k8s;

import java.util.Optional;

/** Finds the pod a process runs in. Implementations read the node; tests use {@link #NONE} or their own. */
@FunctionalInterface
public interface PodLookup {

    /** Never finds a pod: a node without Kubernetes. */
    PodLookup NONE = pid -> Optional.empty();

    /**
     * The pod and container of the process, or empty when it runs outside Kubernetes or the node does not tell.
     *
     * @param pid a process id of the node's PID namespace
     */
    Optional<PodIdentity> pod(long pid);
}
