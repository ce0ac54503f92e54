package io.distlock.spi;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The owner of a hold as written in the store: {@code <clientId>:t<threadId>} for a thread's hold through the {@code
 * Lock} view, {@code <clientId>:h<n>} for a {@code LockHold}. Unique across clients and over a client's lifetime;
 * thread names are never part of it.
 *
 * <h2>Secrecy</h2>
 *
 * <p>A client id ends with a dot, a public tag of 8 hex digits and a secret of 32 hex digits (128 bits from {@code
 * SecureRandom}), so no owner id can be guessed from a pid, a thread id or the time. Whoever knows an owner id can
 * release or renew that owner's hold through a store's owner-checked operations, so the value is a bearer credential:
 * {@link #toString()} shows only its {@link #redact redacted} form, and nothing logs the value itself.
 */
public record OwnerId(String value) {
    /** The dot, the public tag (group 1) and the secret of a client id. */
    private static final Pattern SECRET = Pattern.compile("\\.([0-9a-f]{8})[0-9a-f]{32}(?![0-9a-f])");

    public OwnerId {
        Objects.requireNonNull(value, "value");
    }

    /**
     * A client id or owner id with its secret left out: {@code pid4711.3fa9c2d1…:t17} for {@code
     * pid4711.3fa9c2d1<32 secret hex digits>:t17}. What is left (the label, the tag, the suffix) tells clients and
     * threads apart in logs without helping anyone forge the id. A value without a secret in the expected place shows
     * only the suffix after its first {@code ':'}.
     */
    public static String redact(String id) {
        Objects.requireNonNull(id, "id");
        String redacted = SECRET.matcher(id).replaceAll(".$1…");
        if (!redacted.equals(id)) {
            return redacted;
        }
        int colon = id.indexOf(':');
        return colon < 0 ? "…" : "…" + id.substring(colon);
    }

    // written out: on every acquire and release, and the generated record methods cost several times as much on JDK 17

    @Override
    public boolean equals(Object o) {
        return this == o || (o instanceof OwnerId other && value.equals(other.value));
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    /** The {@link #redact redacted} value; the value itself is {@link #value()}. */
    @Override
    public String toString() {
        return redact(value);
    }
}
