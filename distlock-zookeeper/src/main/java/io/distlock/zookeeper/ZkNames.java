package io.distlock.zookeeper;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * How lock names and owner ids become ZooKeeper node names. A node name is one path component: never empty, never
 * {@code .} or {@code ..}, free of {@code /} and control characters, and short enough to list thousands of them in one
 * {@code getChildren} answer.
 *
 * <p>A lock name becomes {@code n-<escaped>} where every byte of its UTF-8 form outside {@code [A-Za-z0-9._~@-]} is
 * written as {@code %XX}; that is reversible and injective, so distinct names never share a node. A name whose escaped
 * form is longer than {@link #MAX_ESCAPED} becomes {@code h-<sha-256 hex>}, and the full name is kept in the lock
 * node's data. The prefixes keep the two forms apart, and keep {@code .} and {@code ..} out.
 *
 * <p>A queue entry is {@code [_c_<uuid>-]l-<owner tag>-<10-digit sequence>}: the optional prefix is Curator's protected
 * mode, the owner tag is the escaped owner id (or {@code #<sha-256 hex>} when long), and the suffix is the sequence
 * ZooKeeper appends.
 */
final class ZkNames {
    /** Longest escaped lock name kept readable; longer names are hashed. */
    static final int MAX_ESCAPED = 200;

    static final int MAX_OWNER_TAG = 120;
    private static final int SEQUENCE_DIGITS = 10;
    private static final String ENTRY_MARK = "l-";

    private ZkNames() {}

    /** The node name of the lock called {@code name}. */
    static String lockNode(String name) {
        String escaped = escape(name);
        return escaped.length() <= MAX_ESCAPED ? "n-" + escaped : "h-" + sha256(name);
    }

    /** The lock name of a lock node, or null when it is hashed (the name is then in the node's data). */
    static @Nullable String lockName(String node) {
        if (node.startsWith("n-")) {
            return unescape(node.substring(2));
        }
        return null;
    }

    /** Whether {@code node} is a lock node this library wrote. */
    static boolean isLockNode(String node) {
        return node.startsWith("n-") || node.startsWith("h-");
    }

    /** The owner tag that marks an owner's queue entries. */
    static String ownerTag(String owner) {
        String escaped = escape(owner);
        return escaped.length() <= MAX_OWNER_TAG ? escaped : "#" + sha256(owner);
    }

    /** The name handed to ZooKeeper for a new queue entry of {@code owner}; the sequence is appended to it. */
    static String entryPrefix(String owner) {
        return ENTRY_MARK + ownerTag(owner) + "-";
    }

    /** A queue entry as read from {@code getChildren}. */
    record Entry(String node, String ownerTag, long sequence) implements Comparable<Entry> {
        @Override
        public int compareTo(Entry other) {
            return Long.compare(sequence, other.sequence);
        }
    }

    /** Parses a child of a lock node; null for anything this library did not write. */
    static @Nullable Entry entry(String node) {
        int n = node.length();
        if (n < SEQUENCE_DIGITS + 1 + ENTRY_MARK.length() || node.charAt(n - SEQUENCE_DIGITS - 1) != '-') {
            return null;
        }
        long sequence = 0;
        for (int i = n - SEQUENCE_DIGITS; i < n; i++) {
            char c = node.charAt(i);
            if (c < '0' || c > '9') {
                return null;
            }
            sequence = sequence * 10 + (c - '0');
        }
        // the protected-mode prefix "_c_<uuid>-" holds no 'l', so the first "l-" starts our part
        int mark = node.indexOf(ENTRY_MARK);
        int tagEnd = n - SEQUENCE_DIGITS - 1;
        if (mark < 0 || mark + ENTRY_MARK.length() > tagEnd) {
            return null;
        }
        return new Entry(node, node.substring(mark + ENTRY_MARK.length(), tagEnd), sequence);
    }

    static String escape(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z')
                    || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == '~'
                    || c == '@'
                    || c == '-') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
                out.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    static String unescape(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length()) {
                out.write(Integer.parseInt(s, i + 1, i + 3, 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static String sha256(String s) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
