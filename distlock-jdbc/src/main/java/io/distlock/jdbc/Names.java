package io.distlock.jdbc;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * How lock names become database keys. Any Java string is a valid name (unicode, quotes, newlines, NUL, unpaired
 * surrogates, megabytes), so keys are SHA-256 digests of the name's UTF-16 code units, which are lossless: distinct
 * names get distinct keys unless SHA-256 collides. The name itself is stored beside the key for operators only.
 */
final class Names {
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,39}");
    private static final HexFormat HEX = HexFormat.of();

    private Names() {}

    /** The primary key of a name: 64 lowercase hex digits. */
    static String hash(String name) {
        return HEX.formatHex(sha256(name));
    }

    /**
     * A {@code GET_LOCK} name: at most 64 characters, and case-insensitive comparison cannot merge two of them because
     * they are lowercase hex. Includes the table prefix so two lock tables in one server do not share locks.
     */
    static String getLockName(String table, String name) {
        String digest = HEX.formatHex(sha256(table + '\0' + name));
        return "dl:" + digest.substring(0, 60);
    }

    /** A PostgreSQL advisory-lock key: the first 64 bits of the digest of table prefix and name. */
    static long advisoryKey(String table, String name) {
        return ByteBuffer.wrap(sha256("advisory\0" + table + '\0' + name)).getLong();
    }

    /** The name as stored for operators: NUL and unpaired surrogates (which no database text type takes) become U+FFFD. */
    static String display(String name) {
        StringBuilder out = null;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean bad = c == 0
                    || (Character.isHighSurrogate(c)
                            && (i + 1 >= name.length() || !Character.isLowSurrogate(name.charAt(i + 1))))
                    || (Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(name.charAt(i - 1))));
            if (bad && out == null) {
                out = new StringBuilder(name.length()).append(name, 0, i);
            }
            if (out != null) {
                out.append(bad ? '\uFFFD' : c);
            }
        }
        return out == null ? name : out.toString();
    }

    /** A LIKE pattern (escape character '!') matching names that start with {@code prefix}. */
    static String likePrefix(String prefix) {
        StringBuilder out = new StringBuilder();
        for (char c : display(prefix).toCharArray()) {
            if (c == '!' || c == '%' || c == '_') {
                out.append('!');
            }
            out.append(c);
        }
        return out.append('%').toString();
    }

    /** Checks a table-name prefix: a plain SQL identifier, so it can be spliced into statements safely. */
    static String tableName(String table) {
        if (!IDENTIFIER.matcher(table).matches()) {
            throw new IllegalArgumentException(
                    "tableName must be a letter or '_' followed by up to 39 letters, digits or '_': '" + table + "'");
        }
        return table;
    }

    private static byte[] sha256(String s) {
        try {
            ByteBuffer units = ByteBuffer.allocate(s.length() * 2);
            for (int i = 0; i < s.length(); i++) {
                units.putChar(s.charAt(i)); // code units, not an encoder: a lone surrogate stays itself
            }
            return MessageDigest.getInstance("SHA-256").digest(units.array());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
