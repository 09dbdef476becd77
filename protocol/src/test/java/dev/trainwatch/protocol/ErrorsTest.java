package dev.trainwatch.protocol;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ErrorsTest {
    @Test
    void oneLineKeepsTheMessagesFirstLineStripped() {
        assertEquals("disk full", Errors.oneLine(new IOException("  disk full \n  at line 2\n")));
    }

    @Test
    void oneLineNamesTheClassWhenTheMessageIsMissingOrBlank() {
        assertEquals("IOException", Errors.oneLine(new IOException()));
        assertEquals("IllegalStateException", Errors.oneLine(new IllegalStateException(" \n ")));
    }

    @Test
    void firstLineFallsBackOnlyForNull() {
        assertEquals("a", Errors.firstLine("a\r\nb", "none"));
        assertEquals("none", Errors.firstLine(null, "none"));
        assertEquals("", Errors.firstLine("", "none"));
    }

    @Test
    void reasonKeepsOnlyAFileSystemsReasonAndFallsBackToOneLine() {
        assertEquals("Permission denied", Errors.reason(new AccessDeniedException("/a/b", null, "Permission denied")));
        assertEquals("/a/b", Errors.reason(new NoSuchFileException("/a/b")));
        assertEquals("x", Errors.reason(new IOException("x\ny")));
    }

    @Test
    void closeQuietlyClosesAndSwallowsOnlyItsIOException() {
        AtomicInteger closed = new AtomicInteger();
        Closeable failing = () -> {
            closed.incrementAndGet();
            throw new IOException("disk gone");
        };
        assertDoesNotThrow(() -> Errors.closeQuietly(failing));
        assertDoesNotThrow(() -> Errors.closeQuietly(null));
        assertEquals(1, closed.get());
    }
}
