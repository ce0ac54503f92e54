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

    @Override
    public String toString() {
        return value;
    }
}
