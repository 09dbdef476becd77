package dev.trainwatch.agent.gpu;

/**
 * The GPUs cannot be read at all: no NVML library, driver not loaded, no permission. The message is one line
 * naming the cause, fit to print to a user (who then gets exit status 3).
 */
public class GpuUnavailableException extends Exception {
    private static final long serialVersionUID = 1L;

    public GpuUnavailableException(String message) {
        super(message);
    }
}
