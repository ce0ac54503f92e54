package io.distlock.testkit.history;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The flat JSON objects of history files: one object per line, whose values are strings, whole numbers, booleans or
 * null. Writing keeps the order of the fields; reading accepts any flat object with such values (nested objects and
 * arrays are refused).
 */
final class Json {
    private Json() {}

    /** Builds one line. */
    static final class Line {
        private final StringBuilder out = new StringBuilder(160).append('{');
        private boolean first = true;

        Line put(String name, @Nullable Object value) {
            if (value == null) {
                return this;
            }
            if (!first) {
                out.append(',');
            }
            first = false;
            string(out, name);
            out.append(':');
            if (value instanceof Number || value instanceof Boolean) {
                out.append(value);
            } else {
                string(out, value.toString());
            }
            return this;
        }

        String end() {
            return out.append('}').toString();
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** The string field {@code name}, or {@code orElse} when absent. */
    static String str(Map<String, Object> m, String name, String orElse) {
        Object v = m.get(name);
        return v == null ? orElse : v.toString();
    }

    /** The string field {@code name}. */
    static String str(Map<String, Object> m, String name) {
        Object v = m.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing field " + name + " in " + m);
        }
        return v.toString();
    }

    /** The number field {@code name}. */
    static long num(Map<String, Object> m, String name) {
        Object v = m.get(name);
        if (!(v instanceof Long l)) {
            throw new IllegalArgumentException("missing number " + name + " in " + m);
        }
        return l;
    }

    /** The number field {@code name}, or {@code orElse} when absent. */
    static long num(Map<String, Object> m, String name, long orElse) {
        return m.get(name) instanceof Long l ? l : orElse;
    }

    static @Nullable Long optNum(Map<String, Object> m, String name) {
        return m.get(name) instanceof Long l ? l : null;
    }

    static @Nullable String optStr(Map<String, Object> m, String name) {
        Object v = m.get(name);
        return v == null ? null : v.toString();
    }

    /** Parses one flat object; numbers come back as {@link Long}. */
    static Map<String, Object> parse(String line) {
        Parser p = new Parser(line);
        return p.object();
    }

    private static final class Parser {
        private final String s;
        private int i;

        Parser(String s) {
            this.s = s;
        }

        Map<String, Object> object() {
            Map<String, Object> fields = new LinkedHashMap<>();
            skip();
            expect('{');
            skip();
            if (peek() == '}') {
                i++;
                return fields;
            }
            for (; ; ) {
                skip();
                String name = string();
                skip();
                expect(':');
                skip();
                Object value = value();
                if (value != null) {
                    fields.put(name, value);
                }
                skip();
                char c = next();
                if (c == '}') {
                    return fields;
                }
                if (c != ',') {
                    throw error("',' or '}'");
                }
            }
        }

        private @Nullable Object value() {
            char c = peek();
            if (c == '"') {
                return string();
            }
            if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            int start = i;
            if (c == '-') {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            if (i == start || (i == start + 1 && c == '-')) {
                throw error("a string, number, boolean or null");
            }
            return Long.parseLong(s.substring(start, i));
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            for (; ; ) {
                char c = next();
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        if (i + 4 > s.length()) {
                            throw error("four hex digits");
                        }
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            }
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private char peek() {
            if (i >= s.length()) {
                throw error("more input");
            }
            return s.charAt(i);
        }

        private char next() {
            char c = peek();
            i++;
            return c;
        }

        private void expect(char c) {
            if (next() != c) {
                throw error("'" + c + "'");
            }
        }

        private IllegalArgumentException error(String expected) {
            return new IllegalArgumentException("not a flat JSON object, expected " + expected + " at " + i + ": " + s);
        }
    }
}
