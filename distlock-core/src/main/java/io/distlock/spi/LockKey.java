package io.distlock.spi;

import java.util.Objects;

/**
 * The name of a lock as the user gave it: any non-blank string, including braces, slashes, quotes, newlines and
 * unicode. A store must encode it so that distinct names never share or contend for any store key.
 */
public record LockKey(String name) {
    public LockKey {
        Objects.requireNonNull(name, "name");
    }

    // written out, like OwnerId's: the generated record methods are slower on JDK 17

    @Override
    public boolean equals(Object o) {
        return this == o || (o instanceof LockKey other && name.equals(other.name));
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    @Override
    public String toString() {
        return name;
    }
}
