package dev.trainwatch.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
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
}
