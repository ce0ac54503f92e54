package io.distlock.testkit;

import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.HandOff;
import io.distlock.spi.HandsOff;
import io.distlock.spi.HeldLock;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.LockStore;
import io.distlock.spi.OwnerId;
import io.distlock.spi.QueueOrdered;
import io.distlock.spi.Subscription;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** One client's view of an {@link InMemoryLockServer}: the {@link LockStore} the engine drives. */
class InMemoryLockStore implements LockStore, HandsOff {
    /**
     * Tokens reserved per plain grant for local successions: few, so that the contract suite also sees a client run
     * out of them and hand off through the store.
     */
    static final int SPARE_TOKENS = 3;

    final InMemoryLockServer server;
    private final boolean strictQueue;

    InMemoryLockStore(InMemoryLockServer server) {
        this(server, false);
    }

    private InMemoryLockStore(InMemoryLockServer server, boolean strictQueue) {
        this.server = server;
        this.strictQueue = strictQueue;
    }

    @Override
    public Attempt tryAcquire(LockKey key, OwnerId owner, Lease leaseSpec, boolean queue) {
        Duration lease = leaseSpec.length();
        int spare = strictQueue ? 0 : SPARE_TOKENS;
        long r = server.tryAcquire(key.name(), owner, lease.toNanos(), queue, strictQueue, spare);
        return r > 0 ? Attempt.acquired(r, spare) : Attempt.busy(Duration.ofNanos(-r));
    }

    @Override
    public void abandon(LockKey key, OwnerId owner) {
        server.abandon(key.name(), owner);
    }

    @Override
    public boolean release(LockKey key, OwnerId owner) {
        return server.release(key.name(), owner);
    }

    @Override
    public Set<HeldLock> renew(Collection<HeldLock> holds, Duration lease) {
        Set<HeldLock> gone = new HashSet<>();
        for (HeldLock h : holds) {
            if (!server.renew(h.key().name(), h.owner(), lease.toNanos())) {
                gone.add(h);
            }
        }
        return gone;
    }

    @Override
    public HandOff handOff(LockKey key, OwnerId from, OwnerId to, Lease leaseSpec) {
        Duration lease = leaseSpec.length();
        return server.handOff(key.name(), from, to, lease.toNanos(), strictQueue);
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        Runnable cancel = server.subscribe(key.name(), wakeUp);
        return cancel::run;
    }

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        return server.inspect(key.name());
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        return server.list(prefix, limit);
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        return server.forceRelease(key.name());
    }

    @Override
    public void close() {}

    @Override
    public String toString() {
        return strictQueue ? "InMemoryLockStore[strict queue]" : "InMemoryLockStore";
    }

    /** The store for {@code strictQueue}: one whose queue is the only order is {@link QueueOrdered}. */
    static InMemoryLockStore of(InMemoryLockServer server, boolean strictQueue) {
        return strictQueue ? new StrictQueue(server) : new InMemoryLockStore(server);
    }

    /** The store whose queue is the only order between clients, as ZooKeeper's and etcd's. */
    static final class StrictQueue extends InMemoryLockStore implements QueueOrdered {
        StrictQueue(InMemoryLockServer server) {
            super(server, true);
        }
    }
}
