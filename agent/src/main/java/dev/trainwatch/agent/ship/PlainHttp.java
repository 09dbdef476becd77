package dev.trainwatch.agent.ship;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * HTTP/1.1 over one kept-alive socket for the agent's one request: a gzip JSON body of known length to a plain
 * {@code http://} collector, without HttpURLConnection's ~60 classes and two 8 KB buffers a request. A connection idle
 * over {@value #CHECK_AFTER_IDLE_MS} ms is checked before reuse; a request on a reused connection that fails before its
 * answer starts is sent once more on a new one (the collector de-duplicates); one that fails half-way is closed. Not
 * for https or a proxy ({@link HttpTransport}). Thread-safe (one request at a time).
 *
 * <p>Kept under the 10% rule: the agent's own CPU 23% lower with it (0.095 against 0.124% of a core, 2026-12-06,
 * docs/PERFORMANCE.md, "Hand-written copies"). No upstream issue names this cost yet.
 */
final class PlainHttp implements AutoCloseable {

    /** Longest status or header line read. */
    private static final int MAX_LINE = 16 * 1024;
    /** A kept connection idle longer than this is checked before it is reused. */
    static final long CHECK_AFTER_IDLE_MS = 2000;

    private final String host;
    private final int port;
    private final String hostHeader;
    private final String basePath;
    private final int timeoutMillis;
    private final String origin;

    private Socket socket;
    private BufferedInputStream in;
    private OutputStream out;
    private final StringBuilder line = new StringBuilder(128);
    private final byte[] drain = new byte[512];
    /** When the kept connection last gave a whole answer ({@link System#nanoTime()}). */
    private long answeredAtNanos;
    /** True once a byte of the current request's answer was read. */
    private boolean answerStarted;

    /** @param base an {@code http://} URL; its path (if any) prefixes every request's path */
    PlainHttp(URI base, int timeoutMillis) {
        this.host = base.getHost();
        this.port = base.getPort() < 0 ? 80 : base.getPort();
        this.hostHeader = base.getPort() < 0 ? host : host + ":" + base.getPort();
        String path = base.getRawPath() == null ? "" : base.getRawPath();
        this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        this.timeoutMillis = timeoutMillis;
        String s = base.toString();
        this.origin = s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }

    /**
     * Sends one request and reads the whole answer.
     *
     * @param bearer the token, or null for none
     * @param sentAt the {@value HttpTransport#SENT_AT} header's value, or null for none
     * @return the status and the start of the body (at most {@code maxBody} bytes as text)
     */
    synchronized Transport.Response send(String method, String path, byte[] body, String bearer, String sentAt,
                                         int maxBody) throws IOException {
        boolean reused = false;
        if (socket != null) {
            if (System.nanoTime() - answeredAtNanos < CHECK_AFTER_IDLE_MS * 1_000_000L || reusable()) {
                reused = true;
            } else {
                close();
            }
        }
        byte[] head = head(method, path, body.length, bearer, sentAt);
        try {
            if (socket == null) {
                connect();
            }
            return exchange(head, body, method, maxBody);
        } catch (IOException | RuntimeException e) {
            close();
            if (!reused || answerStarted || e instanceof SocketTimeoutException || e instanceof RuntimeException) {
                throw e;
            }
        }
        // The reused connection was gone before it answered: once more on a new one.
        try {
            connect();
            return exchange(head, body, method, maxBody);
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private byte[] head(String method, String path, int length, String bearer, String sentAt) {
        StringBuilder head = new StringBuilder(200);
        head.append(method).append(' ').append(basePath).append(path).append(" HTTP/1.1\r\n")
                .append("Host: ").append(hostHeader).append("\r\n")
                .append("Content-Type: application/json\r\n")
                .append("Content-Encoding: gzip\r\n")
                .append("Content-Length: ").append(length).append("\r\n");
        if (sentAt != null) {
            head.append(HttpTransport.SENT_AT).append(": ").append(sentAt).append("\r\n");
        }
        if (bearer != null && !bearer.isEmpty()) {
            head.append("Authorization: Bearer ").append(bearer).append("\r\n");
        }
        head.append("\r\n");
        return head.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private Transport.Response exchange(byte[] head, byte[] body, String method, int maxBody) throws IOException {
        answerStarted = false;
        out.write(head);
        out.write(body);
        out.flush();
        Transport.Response response = readResponse(method, maxBody);
        answeredAtNanos = System.nanoTime();
        return response;
    }

    private void connect() throws IOException {
        close();
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), timeoutMillis);
            s.setSoTimeout(timeoutMillis);
            in = new BufferedInputStream(s.getInputStream(), 1024);
            out = new BufferedOutputStream(s.getOutputStream(), 8192); // head and body in one write
            socket = s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** True when the kept connection is still open: nothing to read within 1 ms, not its end. */
    private boolean reusable() {
        try {
            if (in.available() > 0) {
                return false; // bytes nobody asked for: not a connection to trust
            }
            socket.setSoTimeout(1);
            try {
                in.read();
                return false; // its end (closed by the collector), or bytes nobody asked for
            } catch (SocketTimeoutException alive) {
                return true;
            } finally {
                socket.setSoTimeout(timeoutMillis);
            }
        } catch (IOException e) {
            return false;
        }
    }

    private Transport.Response readResponse(String method, int maxBody) throws IOException {
        int status;
        boolean close;
        long length;
        boolean chunked;
        while (true) {
            String statusLine = readLine();
            if (statusLine == null) {
                throw new EOFException(origin + " closed the connection without an answer");
            }
            if (!statusLine.startsWith("HTTP/") || statusLine.length() < 12
                    || statusLine.charAt(8) != ' ') {
                throw new IOException("not an HTTP answer from " + origin);
            }
            try {
                status = Integer.parseInt(statusLine.substring(9, 12));
            } catch (NumberFormatException e) {
                throw new IOException("not an HTTP answer from " + origin);
            }
            close = statusLine.startsWith("HTTP/1.0");
            length = -1;
            chunked = false;
            for (String header; (header = readLine()) != null && !header.isEmpty(); ) {
                int colon = header.indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String name = header.substring(0, colon).strip().toLowerCase(Locale.ROOT);
                String value = header.substring(colon + 1).strip();
                switch (name) {
                    case "content-length" -> {
                        try {
                            length = Long.parseLong(value);
                        } catch (NumberFormatException e) {
                            throw new IOException("bad Content-Length from " + origin + ": " + value);
                        }
                    }
                    case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                    case "connection" -> {
                        String v = value.toLowerCase(Locale.ROOT);
                        if (v.contains("close")) {
                            close = true;
                        } else if (v.contains("keep-alive")) {
                            close = false;
                        }
                    }
                    default -> {
                    }
                }
            }
            if (status >= 100 && status < 200) {
                continue; // an interim answer (100 Continue, 103): the real one follows
            }
            break;
        }
        Body body = new Body(maxBody);
        if (method.equals("HEAD") || status == 204 || status == 304) {
            // no body
        } else if (chunked) {
            readChunked(body);
        } else if (length >= 0) {
            body.read(in, length, false);
        } else {
            body.read(in, Long.MAX_VALUE, true); // delimited by the end of the connection
            close = true;
        }
        if (close) {
            close();
        }
        return new Transport.Response(status, HttpTransport.oneLine(body.text()));
    }

    private void readChunked(Body body) throws IOException {
        while (true) {
            String size = readLine();
            if (size == null) {
                throw new EOFException("chunked answer cut short by " + origin);
            }
            int semicolon = size.indexOf(';');
            long n;
            try {
                n = Long.parseLong((semicolon < 0 ? size : size.substring(0, semicolon)).strip(), 16);
            } catch (NumberFormatException e) {
                throw new IOException("bad chunk size from " + origin + ": " + size);
            }
            if (n == 0) {
                for (String trailer; (trailer = readLine()) != null && !trailer.isEmpty(); ) {
                    // trailers are not used
                }
                return;
            }
            body.read(in, n, false);
            String end = readLine();
            if (end == null || !end.isEmpty()) {
                throw new IOException("bad chunk from " + origin);
            }
        }
    }

    /** The start of an answer's body, the rest read and dropped. */
    private final class Body {
        private final byte[] start;
        private int size;

        Body(int max) {
            start = new byte[max];
        }

        void read(InputStream from, long n, boolean toEnd) throws IOException {
            long left = n;
            while (left > 0) {
                int r;
                if (size < start.length) {
                    r = from.read(start, size, (int) Math.min(start.length - size, left));
                    if (r > 0) {
                        size += r;
                    }
                } else {
                    r = from.read(drain, 0, (int) Math.min(drain.length, left));
                }
                if (r < 0) {
                    if (toEnd) {
                        return;
                    }
                    throw new EOFException("answer cut short by " + origin);
                }
                left -= r;
            }
        }

        String text() {
            return new String(start, 0, size, StandardCharsets.UTF_8);
        }
    }

    /** A line without its CR LF (or LF), as ISO-8859-1; null at the end of the connection before any byte. */
    private String readLine() throws IOException {
        line.setLength(0);
        int b;
        while ((b = in.read()) >= 0) {
            answerStarted = true;
            if (b == '\n') {
                int n = line.length();
                if (n > 0 && line.charAt(n - 1) == '\r') {
                    line.setLength(n - 1);
                }
                return line.toString();
            }
            if (line.length() >= MAX_LINE) {
                throw new IOException("header line longer than " + MAX_LINE + " bytes from " + origin);
            }
            line.append((char) b);
        }
        if (line.length() == 0) {
            return null;
        }
        throw new EOFException("answer cut short by " + origin);
    }

    @Override
    public synchronized void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        socket = null;
        in = null;
        out = null;
    }
}
