package io.distlock.cli;

import io.distlock.LockInfo;
import java.time.Duration;

/** How {@link LockInfo} is shown as text and as JSON. */
final class LockViews {
    private LockViews() {}

    static String text(LockInfo info) {
        return "name:            " + info.name() + "\n"
                + "holder:          " + info.owner() + "\n"
                + "lease remaining: " + lease(info.remainingLease()) + "\n"
                + "fencing token:   " + info.fencingToken() + "\n"
                + "waiters:         " + waiters(info.waiters()) + "\n";
    }

    static Json.Obj json(LockInfo info) {
        boolean leased = !info.remainingLease().isZero();
        return Json.obj()
                .put("name", info.name())
                .put("holder", info.owner())
                .put("leaseRemainingMs", leased ? info.remainingLease().toMillis() : null)
                .put("fencingToken", info.fencingToken())
                .put("waiters", info.waiters() < 0 ? null : info.waiters());
    }

    static String lease(Duration remaining) {
        return remaining.isZero() ? "none (held while the owner's session lives)" : Format.lease(remaining);
    }

    static String shortLease(Duration remaining) {
        return remaining.isZero() ? "session" : Format.lease(remaining);
    }

    static String waiters(int waiters) {
        return waiters < 0 ? "unknown (the backend does not tell)" : Integer.toString(waiters);
    }
}
