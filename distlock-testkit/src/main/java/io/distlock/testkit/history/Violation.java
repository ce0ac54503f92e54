package io.distlock.testkit.history;

import java.util.Objects;

/**
 * One breach of a property, with the window of time it concerns ({@link System#nanoTime()} values), for the
 * timeline.
 */
public record Violation(Property property, String key, long from, long to, String message) {
    public Violation {
        Objects.requireNonNull(property, "property");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(message, "message");
    }

    @Override
    public String toString() {
        return property + " on " + key + ": " + message;
    }
}
