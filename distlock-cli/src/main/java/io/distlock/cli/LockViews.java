package io.distlock.cli;

import io.distlock.LockInfo;
import java.time.Duration;

/** How {@link LockInfo} is shown as text and as JSON. */
final class LockViews {
    private LockViews() {}

    static String text(LockInfo info) {
        if (info.kind() == LockInfo.Kind.COUNT_DOWN_LATCH) {
            return "name:            " + info.name() + "\n"
                    + "kind:            count-down latch\n"
                    + "count:           " + info.count() + "\n"
                    + "expires in:      " + Format.lease(info.remainingLease()) + "\n";
        }
        if (info.kind() == LockInfo.Kind.LOCK) {
            return "name:            " + info.name() + "\n"
                    + "holder:          " + info.owner() + "\n"
                    + "lease remaining: " + lease(info.remainingLease()) + "\n"
                    + "fencing token:   " + info.fencingToken() + "\n"
                    + "waiters:         " + waiters(info.waiters()) + "\n";
        }
        StringBuilder out = new StringBuilder()
                .append("name:            ")
                .append(info.name())
                .append('\n')
                .append("kind:            ")
                .append(kind(info.kind()))
                .append('\n')
                .append("waiters:         ")
                .append(waiters(info.waiters()))
                .append('\n');
        for (LockInfo.Holder h : info.holders()) {
            out.append("holder:          ")
                    .append(h.owner())
                    .append(h.exclusive() ? " (exclusive" : " (shared")
                    .append(", ")
                    .append(h.permits())
                    .append(h.permits() == 1 ? " permit" : " permits")
                    .append(", lease ")
                    .append(shortLease(h.remainingLease()))
                    .append(", token ")
                    .append(h.fencingToken())
                    .append(")\n");
        }
        return out.toString();
    }

    static String kind(LockInfo.Kind kind) {
        return switch (kind) {
            case LOCK -> "lock";
            case READ_WRITE_LOCK -> "read-write lock";
            case SEMAPHORE -> "semaphore";
            case COUNT_DOWN_LATCH -> "count-down latch";
        };
    }

    static Json.Obj json(LockInfo info) {
        boolean leased = !info.remainingLease().isZero();
        return Json.obj()
                .put("name", info.name())
                .put("holder", info.owner())
                .put("leaseRemainingMs", leased ? info.remainingLease().toMillis() : null)
                .put("fencingToken", info.fencingToken())
                .put("waiters", info.waiters() < 0 ? null : info.waiters())
                .put("kind", kind(info.kind()))
                .put("holders", info.holders().size())
                .put("count", info.kind() == LockInfo.Kind.COUNT_DOWN_LATCH ? info.count() : null);
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
