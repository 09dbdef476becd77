package dev.trainwatch.collector;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The address the page link and the embedded agent use: reachable from this machine whatever the listen address. */
class CollectorServerClientUriTest {

    @Test
    void aWildcardListenAddressBecomesLoopback() {
        assertThat(CollectorServer.clientUri("0.0.0.0", 9477, false)).hasToString("http://127.0.0.1:9477/");
        assertThat(CollectorServer.clientUri("::", 9477, false)).hasToString("http://127.0.0.1:9477/");
        assertThat(CollectorServer.clientUri("[::]", 9477, false)).hasToString("http://127.0.0.1:9477/");
    }

    @Test
    void aConcreteAddressIsKeptAndIpv6IsBracketed() {
        assertThat(CollectorServer.clientUri("127.0.0.1", 1, false)).hasToString("http://127.0.0.1:1/");
        assertThat(CollectorServer.clientUri("localhost", 80, false)).hasToString("http://localhost:80/");
        assertThat(CollectorServer.clientUri("::1", 9477, false)).hasToString("http://[::1]:9477/");
        assertThat(CollectorServer.clientUri("[::1]", 9477, false)).hasToString("http://[::1]:9477/");
        assertThat(CollectorServer.clientUri("::1", 9477, true)).hasToString("https://[::1]:9477/");
    }
}
