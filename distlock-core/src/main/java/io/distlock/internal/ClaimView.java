package io.distlock.internal;

import io.distlock.spi.Claim;
import io.distlock.spi.Mode;

/**
 * What a read view, a write view or a semaphore asks of its {@link ClaimEngine}: the claim's kind, mode and size, and
 * the listeners its holds are told to.
 */
final class ClaimView {
    final String name;
    final Claim.Kind kind;
    final Mode mode;
    final int size;
    final Listeners listeners;

    ClaimView(String name, Claim.Kind kind, Mode mode, int size) {
        this.name = name;
        this.kind = kind;
        this.mode = mode;
        this.size = size;
        this.listeners = new Listeners(name);
    }

    /** How messages name this view: "read lock 'doc:7'", "semaphore 'exports'". */
    String describe() {
        if (kind == Claim.Kind.SEMAPHORE) {
            return "semaphore '" + name + "'";
        }
        return (mode == Mode.SHARED ? "read lock '" : "write lock '") + name + "'";
    }
}
