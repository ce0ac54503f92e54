package io.distlock.testkit;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;

/** A {@link ClaimStore} that forwards every call; decorators override what they change. */
class ForwardingClaimStore implements ClaimStore {
    final ClaimStore delegate;

    ForwardingClaimStore(ClaimStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return delegate.kinds();
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        return delegate.tryAcquire(claim, queue);
    }

    @Override
    public void abandon(Claim claim) {
        delegate.abandon(claim);
    }

    @Override
    public boolean release(HeldClaim hold) {
        return delegate.release(hold);
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        return delegate.renew(holds, lease);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        return delegate.subscribe(key, wakeUp);
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        return delegate.available(key, kind, size);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
