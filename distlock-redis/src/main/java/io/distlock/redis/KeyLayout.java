package io.distlock.redis;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Every key of one lock name shares a Cluster hash tag, so a script touching them runs on one node and slot:
 *
 *   <prefix>{<encoded name>}:hold      string   owner id of the current hold, PX = lease
 *   <prefix>{<encoded name>}:fence     integer  last fencing token issued (INCR), never expires
 *   <prefix>{<encoded name>}:queue     list     fair-queue owner ids, head first (expires when nobody refreshes)
 *   <prefix>{<encoded name>}:waiters   zset     fair-queue owner id -> server-time deadline to come back by
 *   <prefix>{<encoded name>}:wq        zset     waiting client id -> server time (µs) it started waiting (order)
 *   <prefix>{<encoded name>}:wd        zset     waiting client id -> server time (ms) it comes back by itself
 *   <prefix>{<encoded name>}:claim     hash     read-write lock or semaphore: kind, size, permits in use, exclusive
 *                                               holder, last queue number, the keys' expiries (see claim-common.lua)
 *   <prefix>{<encoded name>}:holds     zset     read-write lock or semaphore holds: mode+owner -> expiry (server ms)
 *   <prefix>{<encoded name>}:grants    hash     mode+owner -> '<permits>:<token>' of each hold
 *   <prefix>{<encoded name>}:cq        zset     queued claims: permits+mode+owner -> queue number
 *   <prefix>{<encoded name>}:cd        zset     queued claims: permits+mode+owner -> server-time deadline (ms)
 *   <prefix>{<encoded name>}:size      string   a semaphore's size, stored by its first user, never expires
 *   <prefix>{<encoded name>}:latch     hash     a count-down latch: '#' -> count, call id -> 1 per counted call
 *   <prefix>{<encoded name>}:cw        channel  wake-ups of a read-write lock's or semaphore's waiters, every client
 *   <prefix>{<encoded name>}:zero      channel  a latch reached zero, every client
 *   <prefix>wake:<client id>           channel  wake-ups of one client, the message is the name's tag <prefix>{...}
 *   <prefix>wake:{<s>}:<client id>     channel  the same, sharded pub/sub (SPUBLISH): one per slot and client
 *
 * The encoding keeps names readable and is injective: '%', '{' and '}' become %25, %7B and %7D, and an unpaired
 * UTF-16 surrogate (which UTF-8 cannot carry) becomes %uXXXX. The encoded name therefore never contains '}', so the
 * hash tag ends exactly where the name ends, and two distinct names never produce the same tag. The prefix may not
 * contain braces, so the first '{' of every key opens our tag.
 */
/** Key names of the Redis lock store; see the overview comment in the source. */
final class KeyLayout {
    static final String HOLD = "hold";
    static final String FENCE = "fence";
    static final String QUEUE = "queue";
    static final String WAITERS = "waiters";
    static final String CHANNEL = "ch";
    static final String WAKE_ORDER = "wq";
    static final String WAKE_DEADLINES = "wd";
    static final String CLAIM = "claim";
    static final String HOLDS = "holds";
    static final String GRANTS = "grants";
    static final String CLAIM_QUEUE = "cq";
    static final String CLAIM_DEADLINES = "cd";
    static final String SIZE = "size";
    static final String LATCH = "latch";
    static final String ZERO = "zero";
    static final String CLAIM_CHANNEL = "cw";

    private static final int RECENT_SLOTS = 256;
    static final int CACHED_NAME_LENGTH = 256;

    private final String prefix;

    /**
     * The keys of names used lately, direct-mapped by the name's hash code: a lock+unlock then builds a name's key
     * strings once instead of once per script call, and a name locked again and again keeps them. Entries are
     * immutable but for their lazily made keys (a benign race: both writers make equal strings), so the array is read
     * and written without synchronization.
     */
    private final NameKeys[] recent = new NameKeys[RECENT_SLOTS];

    KeyLayout(String prefix) {
        this.prefix = checkPrefix(prefix);
    }

    /**
     * The keys of {@code name}, from the recent-names cache when there. A name longer than {@link #CACHED_NAME_LENGTH}
     * characters is not kept: the cache must not hold on to large strings (a name may be 10 kB).
     */
    NameKeys keys(String name) {
        if (name.length() > CACHED_NAME_LENGTH) {
            return new NameKeys(name, tag(name));
        }
        int h = name.hashCode();
        int slot = (h ^ (h >>> 16)) & (RECENT_SLOTS - 1);
        NameKeys k = recent[slot];
        if (k == null || !k.name.equals(name)) {
            k = new NameKeys(name, tag(name));
            recent[slot] = k;
        }
        return k;
    }

    /** The tag and the keys of one lock name; the keys most calls need are made at once, the others when first asked. */
    static final class NameKeys {
        final String name;
        final String tag;
        final String hold;
        final String fence;
        private @Nullable String queue;
        private @Nullable String wakeOrder;

        NameKeys(String name, String tag) {
            this.name = name;
            this.tag = tag;
            this.hold = key(tag, HOLD);
            this.fence = key(tag, FENCE);
        }

        String queue() {
            String q = queue;
            if (q == null) {
                q = key(tag, QUEUE);
                queue = q;
            }
            return q;
        }

        String wakeOrder() {
            String w = wakeOrder;
            if (w == null) {
                w = key(tag, WAKE_ORDER);
                wakeOrder = w;
            }
            return w;
        }
    }

    static String checkPrefix(String prefix) {
        Objects.requireNonNull(prefix, "keyPrefix");
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix must not contain '{' or '}': '" + prefix + "'");
        }
        return prefix;
    }

    String prefix() {
        return prefix;
    }

    /** {@code <prefix>{<encoded name>}}: the part every key of the name starts with. */
    String tag(String name) {
        return prefix + "{" + encode(name) + "}";
    }

    static String key(String tag, String kind) {
        return tag + ":" + kind;
    }

    /**
     * The keys of a script that may wake a waiting client: hold, queue, waiters, wait order, wait deadlines, fence
     * counter (a grant to a waiting client takes a token).
     */
    static String[] wakeKeys(String tag) {
        return new String[] {
            key(tag, HOLD),
            key(tag, QUEUE),
            key(tag, WAITERS),
            key(tag, WAKE_ORDER),
            key(tag, WAKE_DEADLINES),
            key(tag, FENCE)
        };
    }

    /**
     * The keys every claim script takes first (see claim-common.lua): meta, holds, grants, queue, queue deadlines; then
     * the {@code more} kinds of key of the name.
     */
    static String[] claimKeys(String tag, String... more) {
        String[] keys = new String[5 + more.length];
        keys[0] = key(tag, CLAIM);
        keys[1] = key(tag, HOLDS);
        keys[2] = key(tag, GRANTS);
        keys[3] = key(tag, CLAIM_QUEUE);
        keys[4] = key(tag, CLAIM_DEADLINES);
        for (int i = 0; i < more.length; i++) {
            keys[5 + i] = key(tag, more[i]);
        }
        return keys;
    }

    /** The name of a key {@code <prefix>{<encoded name>}:<suffix>} of this layout, or null if the key is not one. */
    @Nullable
    String nameOfKey(String key, String suffix) {
        String end = "}:" + suffix;
        if (!key.startsWith(prefix + "{") || !key.endsWith(end)) {
            return null;
        }
        String encoded = key.substring(prefix.length() + 1, key.length() - end.length());
        if (encoded.indexOf('}') >= 0) {
            return null;
        }
        try {
            return decode(encoded);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** A SCAN pattern matching the {@code suffix} keys of every name that starts with {@code namePrefix}. */
    String keyPattern(String namePrefix, String suffix) {
        return glob(prefix) + "{" + glob(encode(namePrefix)) + "*}:" + suffix;
    }

    /** The lock name of a tag {@code <prefix>{<encoded name>}} of this layout, or null if it is not one. */
    @Nullable
    String nameOfTag(String tag) {
        if (!tag.startsWith(prefix + "{") || !tag.endsWith("}")) {
            return null;
        }
        String encoded = tag.substring(prefix.length() + 1, tag.length() - 1);
        if (encoded.indexOf('}') >= 0) {
            return null;
        }
        try {
            return decode(encoded);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The lock name of a hold key of this layout, or null if the key is not one. */
    @Nullable
    String nameOfHoldKey(String key) {
        String suffix = "}:" + HOLD;
        if (!key.startsWith(prefix + "{") || !key.endsWith(suffix)) {
            return null;
        }
        String encoded = key.substring(prefix.length() + 1, key.length() - suffix.length());
        if (encoded.indexOf('}') >= 0) {
            return null;
        }
        try {
            return decode(encoded);
        } catch (IllegalArgumentException e) {
            return null; // not written by us
        }
    }

    /** A SCAN pattern matching the hold keys of every name that starts with {@code namePrefix}. */
    String holdPattern(String namePrefix) {
        return glob(prefix) + "{" + glob(encode(namePrefix)) + "*}:" + HOLD;
    }

    /** A SCAN pattern matching every key of one name. */
    String namePattern(String name) {
        return glob(tag(name)) + ":*";
    }

    static String encode(String name) {
        int n = name.length();
        int first = 0; // most names need no escape: find the first character that does with one tight scan
        while (first < n) {
            char c = name.charAt(first);
            if (c == '%' || c == '{' || c == '}' || Character.isSurrogate(c)) {
                break;
            }
            first++;
        }
        if (first == n) {
            return name;
        }
        StringBuilder out = null;
        for (int i = first; i < n; i++) {
            char c = name.charAt(i);
            String escape = null;
            if (c == '%') {
                escape = "%25";
            } else if (c == '{') {
                escape = "%7B";
            } else if (c == '}') {
                escape = "%7D";
            } else if (Character.isHighSurrogate(c)) {
                if (i + 1 < n && Character.isLowSurrogate(name.charAt(i + 1))) {
                    if (out != null) {
                        out.append(c).append(name.charAt(i + 1));
                    }
                    i++;
                    continue;
                }
                escape = surrogate(c);
            } else if (Character.isLowSurrogate(c)) {
                escape = surrogate(c);
            }
            if (escape != null) {
                if (out == null) {
                    out = new StringBuilder(n + 16).append(name, 0, i);
                }
                out.append(escape);
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? name : out.toString();
    }

    private static String surrogate(char c) {
        return "%u" + String.format("%04X", (int) c);
    }

    static String decode(String encoded) {
        if (encoded.indexOf('%') < 0) {
            return encoded;
        }
        StringBuilder out = new StringBuilder(encoded.length());
        int n = encoded.length();
        for (int i = 0; i < n; i++) {
            char c = encoded.charAt(i);
            if (c != '%') {
                out.append(c);
                continue;
            }
            if (encoded.startsWith("%25", i)) {
                out.append('%');
                i += 2;
            } else if (encoded.startsWith("%7B", i)) {
                out.append('{');
                i += 2;
            } else if (encoded.startsWith("%7D", i)) {
                out.append('}');
                i += 2;
            } else if (encoded.startsWith("%u", i) && i + 6 <= n) {
                out.append((char) Integer.parseInt(encoded.substring(i + 2, i + 6), 16));
                i += 5;
            } else {
                throw new IllegalArgumentException("not an encoded lock name: '" + encoded + "'");
            }
        }
        return out.toString();
    }

    /** Escapes the glob characters of SCAN MATCH. */
    static String glob(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }
}
