package dev.trainwatch.agent.ship;

import java.io.IOException;

/** Sends one shipment to the collector. The production implementation is {@link HttpTransport}. */
public interface Transport {

    /** The HTTP status the collector answered, with the start of its body for log lines. */
    record Response(int status, String body) {
    }

    /**
     * Sends and waits for the answer.
     *
     * @throws IOException when the collector cannot be reached or does not answer in time
     */
    Response send(Shipment shipment) throws IOException, InterruptedException;
}
