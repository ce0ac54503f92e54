package io.distlock.testkit;

/** Typed nulls for the bad-input contracts, past NullAway. */
final class BadInput {
    private BadInput() {}

    @SuppressWarnings({"unchecked", "NullAway"})
    static <T> T nullOf() {
        return (T) null;
    }
}
