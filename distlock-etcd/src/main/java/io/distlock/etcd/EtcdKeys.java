package io.distlock.etcd;

import io.distlock.spi.Claim;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The key layout of the etcd backend: {@code <namespace><encoded name>/<owner>}.
 *
 * <p>A name is percent-encoded byte by byte from UTF-8, keeping only {@code A-Z a-z 0-9 - . _ ~ :} as they are. The
 * encoded name therefore never contains {@code /}, so the first {@code /} after the namespace ends it: the keys of
 * {@code a} ({@code a/...}) and of {@code a/b} ({@code a%2Fb/...}) share no prefix, and no name can reach outside its
 * own {@code <namespace><encoded name>/} range. Encoding is a homomorphism on concatenation with self-delimiting units,
 * so the names starting with some text are exactly the keys starting with {@code <namespace><encoded text>}.
 *
 * <p>A key's value is {@code lease=<millis>ms owner=<owner>}: its owner and the nominal lease of its hold, for
 * operators and for the lease left that {@code inspect} reports. The keys of read-write locks and semaphores say what
 * they claim between the two: {@code lease=<millis>ms kind=<rw|semaphore> mode=<x|s> permits=<n> size=<n>
 * [after=<revision>] owner=<owner>} (see {@link EtcdClaimQueue}). A read lock's key is the owner's key followed by
 * {@code :r}, so an owner's write and read holds of one name are two keys; owner ids contain exactly one {@code :}, so
 * the suffix cannot be taken for another owner.
 *
 * <p>A count-down latch keeps its count in {@code <namespace><encoded name>%latch} and the ids of the count-downs it
 * has counted under {@code <namespace><encoded name>%latch/}. An encoded name never contains {@code %l} (a percent sign
 * is always followed by two hex digits), so these keys belong to no other name and lie outside every name's claim
 * range.
 */
final class EtcdKeys {
    private static final char TERMINATOR = '/';
    /** What a read lock's key adds to its owner's key. */
    static final String READ_SUFFIX = ":r";

    private static final String LATCH = "%latch";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private final String namespace;

    EtcdKeys(String namespace) {
        this.namespace = Objects.requireNonNull(namespace, "namespace");
    }

    String namespace() {
        return namespace;
    }

    /** {@code <namespace><encoded name>/}: the range holding every key of one lock. */
    String namePrefix(String name) {
        return namespace + encode(name) + TERMINATOR;
    }

    /** The key an owner writes for a lock. */
    String ownerKey(String name, String owner) {
        return namePrefix(name) + owner;
    }

    /** The key of an owner's hold of a claim of this kind and mode: read holds have their own key. */
    String holdKey(String name, String owner, Claim.Kind kind, Mode mode) {
        String k = ownerKey(name, owner);
        return kind == Claim.Kind.READ_WRITE_LOCK && mode == Mode.SHARED ? k + READ_SUFFIX : k;
    }

    /** The key holding a latch's count. */
    String latchKey(String name) {
        return namespace + encode(name) + LATCH;
    }

    /** The key recording that a latch counted the count-down {@code callId}; under {@link #latchKey}'s range. */
    String latchCallKey(String name, String callId) {
        return latchKey(name) + TERMINATOR + callId;
    }

    /** The range holding the keys of every lock whose name starts with {@code prefix}. */
    String namesStartingWith(String prefix) {
        return namespace + encode(prefix);
    }

    /** The name and owner of a key under the namespace, or null if the key is not one of ours. */
    @Nullable
    Parsed parse(String key) {
        if (!key.startsWith(namespace)) {
            return null;
        }
        int end = key.indexOf(TERMINATOR, namespace.length());
        if (end < 0) {
            return null;
        }
        String name = decode(key.substring(namespace.length(), end));
        if (name == null) {
            return null;
        }
        return new Parsed(name, key.substring(end + 1));
    }

    record Parsed(String name, String owner) {}

    /** The value of an owner's key: its owner and its nominal lease. */
    static String value(OwnerId owner, Duration lease) {
        return "lease=" + lease.toMillis() + "ms owner=" + owner.value();
    }

    /**
     * The value of a read-write lock's or semaphore's key: its nominal lease, what it claims, and, for a read hold taken
     * by the holder of the write lock (a downgrade), the create revision of that write key, whose place in the queue the
     * read hold takes.
     */
    static String claimValue(Claim c, long after) {
        return "lease=" + c.lease().length().toMillis() + "ms kind="
                + (c.kind() == Claim.Kind.SEMAPHORE ? "semaphore" : "rw")
                + " mode=" + (c.mode() == Mode.EXCLUSIVE ? "x" : "s")
                + " permits=" + c.permits()
                + " size=" + c.size()
                + (after > 0 ? " after=" + after : "")
                + " owner=" + c.owner().value();
    }

    /** The nominal lease written in a key's value, or null if the value is not ours. */
    static @Nullable Duration leaseOf(String value) {
        if (!value.startsWith("lease=")) {
            return null;
        }
        int end = value.indexOf("ms ");
        if (end < 0) {
            return null;
        }
        try {
            return Duration.ofMillis(Long.parseLong(value.substring("lease=".length(), end)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    static String encode(String name) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xFF;
            if (unreserved(c)) {
                out.append((char) c);
            } else {
                out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
            }
        }
        return out.toString();
    }

    /** The name an encoded segment stands for, or null if the segment is not a valid encoding. */
    static @Nullable String decode(String encoded) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%') {
                if (i + 2 >= encoded.length()) {
                    return null;
                }
                int hi = Character.digit(encoded.charAt(i + 1), 16);
                int lo = Character.digit(encoded.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else if (c < 0x80 && unreserved(c)) {
                out.write(c);
            } else {
                return null;
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static boolean unreserved(int c) {
        return (c >= 'A' && c <= 'Z')
                || (c >= 'a' && c <= 'z')
                || (c >= '0' && c <= '9')
                || c == '-'
                || c == '.'
                || c == '_'
                || c == '~'
                || c == ':';
    }
}
