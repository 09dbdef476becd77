package dev.trainwatch.estimator.config;

import dev.trainwatch.estimator.config.ConfigReaders.Located;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the subset of Python that mmcv-style training configs use: top-level {@code name = value} assignments
 * whose values are literals (numbers, strings, True/False/None, lists, tuples, {@code {...}} and
 * {@code dict(...)}), references to earlier names, and simple arithmetic. Imports are skipped. Anything it cannot
 * evaluate (a call, a comprehension, an attribute) becomes an {@link Opaque} value, which only matters if the
 * estimator needs that key. Syntax it cannot follow is a {@link ConfigException} with the line. Not thread-safe
 * (one instance per file).
 */
final class PythonConfigParser {

    /** A value the parser saw but cannot evaluate; {@code line} is where it starts. */
    record Opaque(String why, int line) {
    }

    private enum Kind { NAME, NUMBER, STRING, OP, NEWLINE, END }

    private record Token(Kind kind, String text, int line) {
    }

    private final Path file;
    private final List<Token> tokens;
    private int pos;
    private final Map<String, Located> scope = new LinkedHashMap<>();

    private PythonConfigParser(Path file, String source) {
        this.file = file;
        this.tokens = tokenize(source);
    }

    /** Top-level assignments of the file with their lines, in order (later assignments replace earlier ones). */
    static Map<String, Located> parse(Path file, String source) {
        PythonConfigParser parser = new PythonConfigParser(file, source);
        parser.parseFile();
        return parser.scope;
    }

    private void parseFile() {
        while (peek().kind != Kind.END) {
            Token t = peek();
            if (t.kind == Kind.NEWLINE) {
                pos++;
                continue;
            }
            if (t.kind == Kind.NAME && (t.text.equals("import") || t.text.equals("from"))) {
                while (peek().kind != Kind.NEWLINE && peek().kind != Kind.END) {
                    pos++;
                }
                continue;
            }
            // t is neither a NEWLINE nor the END, so a token follows it.
            if (t.kind != Kind.NAME || !isOp(tokens.get(pos + 1), "=")) {
                throw error(t.line, "expected 'name = value', found '" + t.text + "'");
            }
            pos += 2;
            Object value = expression();
            Token end = next();
            if (end.kind != Kind.NEWLINE && end.kind != Kind.END) {
                throw error(end.line, "unexpected '" + end.text + "' after the value of " + t.text);
            }
            scope.put(t.text, new Located(value, file, t.line));
        }
    }

    // expression := term (('+'|'-') term)*
    private Object expression() {
        Object left = term();
        while (isOp(peek(), "+") || isOp(peek(), "-")) {
            String op = next().text;
            left = arithmetic(op, left, term());
        }
        if (peek().kind == Kind.NAME && (peek().text.equals("if") || peek().text.equals("for"))) {
            int line = peek().line;
            skipExpressionTail();
            return new Opaque("a conditional or comprehension", line);
        }
        return left;
    }

    private Object term() {
        Object left = unary();
        while (isOp(peek(), "*") || isOp(peek(), "/") || isOp(peek(), "//") || isOp(peek(), "%")) {
            String op = next().text;
            left = arithmetic(op, left, unary());
        }
        return left;
    }

    private Object unary() {
        if (isOp(peek(), "-")) {
            pos++;
            return arithmetic("*", -1L, unary());
        }
        if (isOp(peek(), "+")) {
            pos++;
            return unary();
        }
        Object base = postfix();
        if (isOp(peek(), "**")) {
            pos++;
            return arithmetic("**", base, unary());
        }
        return base;
    }

    /** An atom followed by calls, attributes or subscripts (which make it opaque). */
    private Object postfix() {
        int line = peek().line;
        Object value = atom();
        while (isOp(peek(), "(") || isOp(peek(), ".") || isOp(peek(), "[")) {
            Token t = next();
            if (t.text.equals(".")) {
                Token name = next();
                if (name.kind != Kind.NAME) {
                    throw error(name.line, "expected a name after '.'");
                }
                value = new Opaque("an attribute", line);
            } else {
                skipUntilClose();
                value = new Opaque(t.text.equals("(") ? "a function call" : "a subscript", line);
            }
        }
        return value;
    }

    private Object atom() {
        Token t = next();
        return switch (t.kind) {
            case NUMBER -> number(t);
            case STRING -> {
                StringBuilder s = new StringBuilder(t.text);
                while (peek().kind == Kind.STRING) {
                    s.append(next().text);
                }
                yield s.toString();
            }
            case NAME -> name(t);
            case OP -> switch (t.text) {
                case "(" -> parenthesised();
                case "[" -> sequence();
                case "{" -> braces();
                default -> throw error(t.line, "unexpected '" + t.text + "'");
            };
            case NEWLINE, END -> throw error(t.line, "a value is missing");
        };
    }

    private Object name(Token t) {
        if (t.text.equals("dict") && isOp(peek(), "(")) {
            pos++;
            return keywordArguments();
        }
        if (t.text.equals("lambda")) {
            skipExpressionTail();
            return new Opaque("a lambda", t.line);
        }
        Located known = scope.get(t.text);
        return switch (t.text) {
            case "True" -> Boolean.TRUE;
            case "False" -> Boolean.FALSE;
            case "None" -> null;
            case "dict" -> new Opaque("the name dict", t.line);
            default -> known != null ? known.value() : new Opaque("the undefined name " + t.text, t.line);
        };
    }

    /** {@code dict(a=1, b=2)}; the opening parenthesis is consumed. */
    private Map<String, Object> keywordArguments() {
        Map<String, Object> map = new LinkedHashMap<>();
        items(")", () -> {
            Token key = next();
            if (key.kind != Kind.NAME || !isOp(peek(), "=")) {
                throw error(key.line, "expected 'key=value' inside dict(), found '" + key.text + "'");
            }
            pos++;
            map.put(key.text, expression());
        });
        return map;
    }

    private Object parenthesised() {
        if (isOp(peek(), ")")) {
            pos++;
            return List.of();
        }
        Object first = expression();
        if (isOp(peek(), ")")) {
            pos++;
            return first;
        }
        List<Object> items = new ArrayList<>();
        items.add(first);
        while (isOp(peek(), ",")) {
            pos++;
            if (isOp(peek(), ")")) {
                break;
            }
            items.add(expression());
        }
        expect(")");
        return items;
    }

    private List<Object> sequence() {
        List<Object> items = new ArrayList<>();
        items("]", () -> items.add(expression()));
        return items;
    }

    private Map<String, Object> braces() {
        Map<String, Object> map = new LinkedHashMap<>();
        items("}", () -> {
            Object key = expression();
            if (!isOp(peek(), ":")) {
                throw error(peek().line, "expected ':' in a dict literal");
            }
            pos++;
            map.put(String.valueOf(key), expression());
        });
        return map;
    }

    /**
     * Comma-separated items, each read by {@code item}, up to {@code close} (a trailing comma allowed). The tokenizer
     * has checked that every bracket closes, so no bracket's content runs into the end of the file.
     */
    private void items(String close, Runnable item) {
        while (!isOp(peek(), close)) {
            item.run();
            if (!isOp(peek(), ",")) {
                break;
            }
            pos++;
        }
        expect(close);
    }

    private void expect(String close) {
        Token t = next();
        if (!isOp(t, close)) {
            throw error(t.line, "expected '" + close + "', found '" + t.text + "'");
        }
    }

    private void skipUntilClose() {
        int depth = 1;
        while (depth > 0) {
            Token t = next();
            if (t.kind == Kind.OP && (t.text.equals("(") || t.text.equals("[") || t.text.equals("{"))) {
                depth++;
            } else if (t.kind == Kind.OP && (t.text.equals(")") || t.text.equals("]") || t.text.equals("}"))) {
                depth--;
            }
        }
    }

    /** Skips to the end of the current expression: a top-level ',' or closing bracket, or the end of the line. */
    private void skipExpressionTail() {
        int depth = 0;
        while (true) {
            Token t = peek();
            if (t.kind == Kind.END || t.kind == Kind.NEWLINE) {
                return;
            }
            if (t.kind == Kind.OP) {
                if (t.text.equals("(") || t.text.equals("[") || t.text.equals("{")) {
                    depth++;
                } else if (t.text.equals(")") || t.text.equals("]") || t.text.equals("}")) {
                    if (depth == 0) {
                        return;
                    }
                    depth--;
                } else if (t.text.equals(",") && depth == 0) {
                    return;
                }
            }
            pos++;
        }
    }

    private static Object number(Token t) {
        String s = t.text.replace("_", "");
        try {
            if (s.startsWith("0x") || s.startsWith("0X")) {
                return Long.parseLong(s.substring(2), 16);
            }
            if (s.contains(".") || s.contains("e") || s.contains("E")) {
                return Double.parseDouble(s);
            }
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return new Opaque("the number " + t.text, t.line);
        }
    }

    private Object arithmetic(String op, Object a, Object b) {
        if (a instanceof Opaque) {
            return a;
        }
        if (b instanceof Opaque) {
            return b;
        }
        if (op.equals("+") && a instanceof String sa && b instanceof String sb) {
            return sa + sb;
        }
        if (op.equals("+") && a instanceof List<?> la && b instanceof List<?> lb) {
            List<Object> joined = new ArrayList<>(la);
            joined.addAll(lb);
            return joined;
        }
        if (!(a instanceof Number na) || !(b instanceof Number nb)) {
            return new Opaque("arithmetic on non-numbers", peek().line);
        }
        boolean integral = a instanceof Long && b instanceof Long;
        double x = na.doubleValue();
        double y = nb.doubleValue();
        long i = na.longValue();
        long j = nb.longValue();
        return switch (op) {
            case "+" -> integral ? (Object) (i + j) : (Object) (x + y);
            case "-" -> integral ? (Object) (i - j) : (Object) (x - y);
            case "*" -> integral ? (Object) (i * j) : (Object) (x * y);
            case "/" -> x / y;
            case "//" -> integral && j != 0 ? (Object) Math.floorDiv(i, j) : (Object) Math.floor(x / y);
            case "%" -> integral && j != 0 ? (Object) Math.floorMod(i, j) : (Object) (x % y);
            default -> Math.pow(x, y);
        };
    }

    private Token peek() {
        return tokens.get(pos);
    }

    private Token next() {
        Token t = tokens.get(pos);
        if (t.kind != Kind.END) {
            pos++;
        }
        return t;
    }

    private static boolean isOp(Token t, String text) {
        return t.kind == Kind.OP && t.text.equals(text);
    }

    private ConfigException error(int line, String why) {
        return new ConfigException(file, line, why);
    }

    // ------------------------------------------------------------------------------------------ tokenizer

    private List<Token> tokenize(String src) {
        List<Token> out = new ArrayList<>();
        int i = 0;
        int line = 1;
        int depth = 0;
        int opened = 0; // the line of the outermost bracket still open
        int n = src.length();
        while (i < n) {
            char c = src.charAt(i);
            if (c == '\n') {
                if (depth == 0 && !out.isEmpty() && out.get(out.size() - 1).kind != Kind.NEWLINE) {
                    out.add(new Token(Kind.NEWLINE, "end of line", line));
                }
                line++;
                i++;
            } else if (c == '\\' && i + 1 < n && src.charAt(i + 1) == '\n') {
                line++;
                i += 2;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
                i++;
            } else if (c == '#') {
                while (i < n && src.charAt(i) != '\n') {
                    i++;
                }
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < n && Character.isDigit(src.charAt(i + 1)))) {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(src.charAt(i)) || src.charAt(i) == '.' || src.charAt(i) == '_'
                        || ((src.charAt(i) == '-' || src.charAt(i) == '+')
                        && (src.charAt(i - 1) == 'e' || src.charAt(i - 1) == 'E')
                        && !src.substring(start, i).startsWith("0x")))) {
                    i++;
                }
                out.add(new Token(Kind.NUMBER, src.substring(start, i), line));
            } else if (Character.isLetter(c) || c == '_') {
                int start = i;
                while (i < n && (Character.isLetterOrDigit(src.charAt(i)) || src.charAt(i) == '_')) {
                    i++;
                }
                String word = src.substring(start, i);
                boolean stringPrefix = i < n && (src.charAt(i) == '\'' || src.charAt(i) == '"') && word.length() <= 2
                        && word.toLowerCase().matches("[rbuf]+");
                if (!stringPrefix) {
                    out.add(new Token(Kind.NAME, word, line));
                }
            } else if (c == '\'' || c == '"') {
                int[] end = new int[] {i, line};
                String text = string(src, end);
                out.add(new Token(Kind.STRING, text, line));
                i = end[0];
                line = end[1];
            } else {
                String op = operator(src, i);
                if (op == null) {
                    throw error(line, "unexpected character '" + c + "'");
                }
                if (op.equals("(") || op.equals("[") || op.equals("{")) {
                    opened = depth++ == 0 ? line : opened;
                } else if (op.equals(")") || op.equals("]") || op.equals("}")) {
                    if (depth == 0) {
                        throw error(line, "unmatched '" + op + "'");
                    }
                    depth--;
                }
                out.add(new Token(Kind.OP, op, line));
                i += op.length();
            }
        }
        if (depth > 0) {
            throw error(opened, "the bracket opened on this line is never closed");
        }
        out.add(new Token(Kind.NEWLINE, "end of line", line));
        out.add(new Token(Kind.END, "end of file", line));
        return out;
    }

    private static String operator(String src, int i) {
        for (String op : new String[] {"**", "//", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", "=", ":",
                ".", "+", "-", "*", "/", "%", "<", ">", "@", "|", "&", "~", "^"}) {
            if (src.startsWith(op, i)) {
                return op;
            }
        }
        return null;
    }

    /** Reads a string literal starting at end[0]; leaves end[0] after it and end[1] at the current line. */
    private String string(String src, int[] end) {
        int i = end[0];
        int line = end[1];
        int startLine = line;
        char quote = src.charAt(i);
        boolean triple = src.startsWith(String.valueOf(quote).repeat(3), i);
        i += triple ? 3 : 1;
        StringBuilder s = new StringBuilder();
        while (true) {
            if (i >= src.length()) {
                throw error(startLine, "unterminated string");
            }
            char c = src.charAt(i);
            if (c == '\\' && i + 1 < src.length()) {
                char e = src.charAt(i + 1);
                s.append(switch (e) {
                    case 'n' -> '\n';
                    case 't' -> '\t';
                    default -> e;
                });
                if (e == '\n') {
                    line++;
                }
                i += 2;
                continue;
            }
            if (triple ? src.startsWith(String.valueOf(quote).repeat(3), i) : c == quote) {
                i += triple ? 3 : 1;
                break;
            }
            if (c == '\n') {
                if (!triple) {
                    throw error(startLine, "unterminated string");
                }
                line++;
            }
            s.append(c);
            i++;
        }
        end[0] = i;
        end[1] = line;
        return s.toString();
    }
}
