package io.distlock;

import java.util.List;
import java.util.Map;

/**
 * One acquisition of a {@link MultiLock}: a hold on every member, owned by this handle.
 *
 * <p>The hold is valid while every member's hold is; when any member's hold is lost the whole hold is lost (the
 * multi-lock's listeners are told once), and {@link #release()} then ends the members' holds that are left and throws
 * {@link LockLostException}. Releases go to every member, in the reverse of the order they were taken.
 *
 * <pre>{@code
 * try (MultiLockHold hold = MultiLock.of(accounts.lock("a"), ledger.lock("b")).acquire()) {
 *     accountsDb.debit(hold.fencingTokens().get("a"), 100);
 *     ledgerDb.post(hold.fencingTokens().get("b"), entry);
 * }
 * }</pre>
 */
public interface MultiLockHold extends LockHold {

    /**
     * Every member's fencing token by member name, in the multi-lock's order. Fence each resource with the token of
     * the member that guards it: tokens of different members come from different counters and are not comparable.
     */
    Map<String, Long> fencingTokens();

    /**
     * The token of the first member in the multi-lock's order. It grows strictly across acquisitions of multi-locks
     * whose first member is that lock; it says nothing about the other members.
     */
    @Override
    long fencingToken();

    /** The members' holds, in the multi-lock's order. */
    List<LockHold> members();
}
