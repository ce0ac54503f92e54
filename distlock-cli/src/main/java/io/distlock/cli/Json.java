package io.distlock.cli;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** A tiny JSON writer for the {@code --json} output: objects keep their insertion order. */
final class Json {
    private Json() {}

    /** An ordered JSON object under construction. */
    static final class Obj {
        private final Map<String, @Nullable Object> fields = new LinkedHashMap<>();

        Obj put(String key, @Nullable Object value) {
            fields.put(key, value);
            return this;
        }

        @Override
        public String toString() {
            return write(this);
        }
    }

    static Obj obj() {
        return new Obj();
    }

    static List<Object> array() {
        return new ArrayList<>();
    }

    /** JSON text of a value: null, Boolean, Number, CharSequence, {@link Obj}, or an Iterable of those. */
    static String write(@Nullable Object value) {
        StringBuilder sb = new StringBuilder();
        append(sb, value);
        return sb.toString();
    }

    private static void append(StringBuilder sb, @Nullable Object value) {
        if (value == null) {
            sb.append("null");
        } else if (value instanceof Boolean b) {
            sb.append(b.booleanValue());
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                sb.append("null");
            } else {
                sb.append(String.format(Locale.ROOT, "%.3f", d));
            }
        } else if (value instanceof Number n) {
            sb.append(n.longValue());
        } else if (value instanceof Obj o) {
            sb.append('{');
            Iterator<Map.Entry<String, @Nullable Object>> it =
                    o.fields.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<String, @Nullable Object> e = it.next();
                quote(sb, e.getKey());
                sb.append(':');
                append(sb, e.getValue());
                if (it.hasNext()) {
                    sb.append(',');
                }
            }
            sb.append('}');
        } else if (value instanceof Iterable<?> items) {
            sb.append('[');
            boolean first = true;
            for (Object item : items) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                append(sb, item);
            }
            sb.append(']');
        } else {
            quote(sb, value.toString());
        }
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
