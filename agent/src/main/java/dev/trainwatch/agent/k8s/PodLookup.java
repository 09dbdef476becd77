package dev.trainwatch.agent.k8s;

import java.util.Optional;

/** Finds the pod a process runs in. Implementations read the node; tests use their own. */
@FunctionalInterface
public interface PodLookup {

    /** The process's pod, or empty outside Kubernetes or when the node does not tell. */
    Optional<PodIdentity> pod(long pid);
}
