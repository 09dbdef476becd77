package dev.trainwatch.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;

/**
 * Gzip bodies as RFC 1952 allows them, each header flag and member layout built by hand, and broken or oversized ones
 * refused with their status and one line.
 */
class BodyDecoderGzipTest {
    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;
    private static final byte[] JSON = "{\"host\":\"node-1\",\"seq\":7}".getBytes(StandardCharsets.UTF_8);

    private final BodyDecoder decoder = new BodyDecoder(1 << 20);

    @Test
    void aPlainMemberInflates() {
        assertThat(decoder.decode(member(JSON, 0), "gzip")).isEqualTo(JSON);
        assertThat(decoder.decode(member(JSON, 0), " X-GZIP ")).isEqualTo(JSON);
    }

    @Test
    void everyHeaderFlagIsSkippedAndTheHeaderCrcChecked() {
        for (int flags : new int[] {FEXTRA, FNAME, FCOMMENT, FHCRC, FEXTRA | FNAME | FCOMMENT | FHCRC}) {
            assertThat(decoder.decode(member(JSON, flags), "gzip")).as("flags %d", flags).isEqualTo(JSON);
        }
        byte[] badHeaderCrc = member(JSON, FNAME | FHCRC);
        int crcAt = 10 + "body.json".length() + 1;
        badHeaderCrc[crcAt] ^= 0x55;
        assertRefused(badHeaderCrc, 400, "bad gzip body: Corrupt GZIP header");
    }

    @Test
    void membersOneAfterAnotherInflateToTheirConcatenationAndTrailingBytesAreIgnored() {
        byte[] first = Arrays.copyOf(JSON, 10);
        byte[] second = Arrays.copyOfRange(JSON, 10, JSON.length);
        byte[] both = concat(member(first, FNAME), member(second, FEXTRA));
        assertThat(decoder.decode(both, "gzip")).isEqualTo(JSON);
        assertThat(decoder.decode(concat(member(JSON, 0), new byte[] {0, 0, 0}), "gzip")).isEqualTo(JSON);
    }

    @Test
    void aTruncatedOrCorruptBodyIsA400InOneLine() {
        byte[] whole = member(JSON, FCOMMENT);
        assertRefused(Arrays.copyOf(whole, whole.length - 12), 400,
                "bad gzip body: Unexpected end of ZLIB input stream");
        assertRefused(Arrays.copyOf(whole, 14), 400, "bad gzip body: ");
        assertRefused(Arrays.copyOf(whole, 3), 400, "bad gzip body: unexpected end of the gzip stream");
        assertRefused(new byte[0], 400, "bad gzip body: unexpected end of the gzip stream");
        assertRefused(JSON, 400, "bad gzip body: Not in GZIP format");
        byte[] badTrailer = whole.clone();
        badTrailer[badTrailer.length - 8] ^= 1;
        assertRefused(badTrailer, 400, "bad gzip body: Corrupt GZIP trailer");
    }

    @Test
    void inflatingStopsAtTheCap() {
        byte[] zeros = new byte[1 << 20];
        BodyDecoder small = new BodyDecoder(4096);
        assertThat(small.decode(member(Arrays.copyOf(zeros, 4096), 0), "gzip")).hasSize(4096);
        assertThatThrownBy(() -> small.decode(member(Arrays.copyOf(zeros, 4097), 0), "gzip"))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(413))
                .hasMessage("gzip body inflates beyond 4096 bytes");
        // A bomb: 2 MB of zeros in a few KB, in two members, against the cap of 4 KB.
        byte[] bomb = concat(member(zeros, 0), member(zeros, 0));
        assertThat(bomb.length).isLessThan(zeros.length / 50);
        assertThatThrownBy(() -> small.decode(bomb, "gzip"))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(413));
        // Members that reach the cap together, not one alone.
        byte[] half = Arrays.copyOf(zeros, 2049);
        assertThatThrownBy(() -> small.decode(concat(member(half, 0), member(half, 0)), "gzip"))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(413));
    }

    @Test
    void anotherEncodingIsA415AndIdentityIsTheBodyItself() {
        assertThat(decoder.decode(JSON, "identity")).isSameAs(JSON);
        assertThat(decoder.decode(JSON, null)).isSameAs(JSON);
        assertThatThrownBy(() -> decoder.decode(JSON, "br"))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(415))
                .hasMessage("Content-Encoding must be gzip or identity, got 'br'");
    }

    private void assertRefused(byte[] body, int status, String messageStart) {
        assertThatThrownBy(() -> decoder.decode(body, "gzip"))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status()).isEqualTo(status))
                .hasMessageStartingWith(messageStart)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    /** One gzip member of {@code data} with the given header flags, each flag's field filled in. */
    static byte[] member(byte[] data, int flags) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {0x1f, (byte) 0x8b, 8, (byte) flags, 0, 0, 0, 0, 0, (byte) 0xff});
        if ((flags & FEXTRA) != 0) {
            byte[] extra = {'T', 'W', 2, 0, 'h', 'i'};
            out.write(extra.length);
            out.write(0);
            out.writeBytes(extra);
        }
        if ((flags & FNAME) != 0) {
            out.writeBytes("body.json".getBytes(StandardCharsets.ISO_8859_1));
            out.write(0);
        }
        if ((flags & FCOMMENT) != 0) {
            out.writeBytes("written by hand".getBytes(StandardCharsets.ISO_8859_1));
            out.write(0);
        }
        if ((flags & FHCRC) != 0) {
            CRC32 headerCrc = new CRC32();
            headerCrc.update(out.toByteArray());
            int crc16 = (int) headerCrc.getValue() & 0xffff;
            out.write(crc16);
            out.write(crc16 >>> 8);
        }
        Deflater deflater = new Deflater(Deflater.BEST_SPEED, true);
        deflater.setInput(data);
        deflater.finish();
        byte[] chunk = new byte[8192];
        while (!deflater.finished()) {
            out.write(chunk, 0, deflater.deflate(chunk));
        }
        deflater.end();
        CRC32 crc = new CRC32();
        crc.update(data);
        writeIntLe(out, (int) crc.getValue());
        writeIntLe(out, data.length);
        return out.toByteArray();
    }

    private static void writeIntLe(ByteArrayOutputStream out, int v) {
        out.write(v);
        out.write(v >>> 8);
        out.write(v >>> 16);
        out.write(v >>> 24);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
