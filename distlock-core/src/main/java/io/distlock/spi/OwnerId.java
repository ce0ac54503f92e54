package io.distlock.spi;

import java.util.Objects;

/**
 * The owner of a hold as written in the store: {@code <clientId>:t<threadId>} for a thread's hold through the {@code
 * Lock} view, {@code <clientId>:h<n>} for a {@code LockHold}. Unique across clients and over a client's lifetime;
 * thread names are never part of it.
 */
public record OwnerId(String value) {
    public OwnerId {
        Objects.requireNonNull(value, "value");
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

    @Override
    public String toString() {
        return value;
    }
}
