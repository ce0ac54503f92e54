package io.distlock;

import io.distlock.internal.LockBatches;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The multi-holds of one {@link MultiLock} that are in force, its listeners, and the loss watch on its members.
 *
 * <p>Every multi-hold in force (a thread's, or a {@link MultiLockHold}) is registered here with its members' tokens.
 * The multi-lock listens to each member lock object; when a member tells a loss, the registered multi-holds that
 * carry that member's token are marked lost and the multi-lock's listeners are told, once per multi-hold.
 */
final class MultiLockHolds implements LockListener {
    private static final Logger log = LoggerFactory.getLogger(MultiLockHolds.class);

    private final String name;
    private final List<LockListener> listeners = new CopyOnWriteArrayList<>();
    private final Set<Active> active = ConcurrentHashMap.newKeySet();

    MultiLockHolds(String name) {
        this.name = name;
    }

    void addListener(LockListener listener) {
        listeners.add(listener);
    }

    void removeListener(LockListener listener) {
        listeners.remove(listener);
    }

    /** Registers a multi-hold that was just taken and tells the listeners. */
    Active register(Map<String, Long> tokens) {
        Active a = new Active(tokens);
        active.add(a);
        for (LockListener l : listeners) {
            try {
                l.acquired(name, a.token());
            } catch (RuntimeException e) {
                log.warn("distlock: listener {} failed on acquired({})", l, name, e);
            }
        }
        return a;
    }

    /** Ends a multi-hold's registration; tells the listeners of the release unless it was lost. */
    void unregister(Active a, boolean released) {
        active.remove(a);
        if (released && !a.lost.get()) {
            for (LockListener l : listeners) {
                try {
                    l.released(name, a.token());
                } catch (RuntimeException e) {
                    log.warn("distlock: listener {} failed on released({})", l, name, e);
                }
            }
        }
    }

    /** Marks a multi-hold lost and tells the listeners, the first time only. */
    void markLost(Active a, @Nullable Throwable cause) {
        if (!a.lost.compareAndSet(false, true)) {
            return;
        }
        for (LockListener l : listeners) {
            try {
                l.lost(name, a.token(), cause);
            } catch (RuntimeException e) {
                log.warn("distlock: listener {} failed on lost({})", l, name, e);
            }
        }
    }

    /** A member told the loss of one of its holds: every multi-hold built on that hold is lost. */
    @Override
    public void lost(String memberName, long fencingToken, @Nullable Throwable cause) {
        for (Active a : active) {
            Long t = a.tokens.get(memberName);
            if (t != null && t == fencingToken) {
                markLost(a, cause);
            }
        }
    }

    /** Takes one hold of every member, in order, waiting as long as it takes. */
    MultiLockHold acquire(List<DistributedLock> members) throws InterruptedException {
        List<LockHold> taken = new ArrayList<>(members.size());
        boolean together = true;
        try {
            while (taken.size() < members.size()) {
                if (together) {
                    taken.addAll(LockBatches.tryAcquireRun(members, taken.size(), null));
                    together = false; // the member after the run (or its busy first) is taken on its own
                    continue;
                }
                taken.add(members.get(taken.size()).acquire());
                together = true;
            }
        } catch (InterruptedException | RuntimeException e) {
            releaseTaken(taken, e);
            throw e;
        }
        return new Hold(name, this, taken);
    }

    /** Takes one hold of every member, in order, within {@code waitNanos}; null when a member stayed busy. */
    @Nullable
    MultiLockHold tryAcquire(List<DistributedLock> members, long waitNanos, @Nullable Duration lease)
            throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        long deadline = System.nanoTime() + waitNanos;
        while (true) {
            List<LockHold> taken = new ArrayList<>(members.size());
            long firstGrant = 0;
            boolean together = true;
            try {
                while (taken.size() < members.size()) {
                    if (together) {
                        List<LockHold> got = LockBatches.tryAcquireRun(members, taken.size(), lease);
                        if (!got.isEmpty() && taken.isEmpty()) {
                            firstGrant = System.nanoTime();
                        }
                        taken.addAll(got);
                        together = false;
                        continue;
                    }
                    together = true;
                    DistributedLock m = members.get(taken.size());
                    Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
                    Optional<LockHold> h = lease == null ? m.tryAcquire(left) : m.tryAcquire(left, lease);
                    if (h.isEmpty()) {
                        releaseTaken(taken, null);
                        return null;
                    }
                    if (taken.isEmpty()) {
                        firstGrant = System.nanoTime();
                    }
                    taken.add(h.get());
                }
            } catch (InterruptedException | RuntimeException e) {
                releaseTaken(taken, e);
                throw e;
            }
            if (lease == null || System.nanoTime() - firstGrant < lease.toNanos()) {
                return new Hold(name, this, taken);
            }
            // the first member's lease ran out while a later one was awaited: the set was never held together
            releaseTaken(taken, null);
            if (deadline - System.nanoTime() <= 0) {
                return null;
            }
        }
    }

    static void releaseTaken(List<LockHold> taken, @Nullable Throwable primary) {
        List<RuntimeException> failures = new ArrayList<>();
        for (int i = taken.size() - 1; i >= 0; i--) {
            try {
                taken.get(i).release();
            } catch (LockLostException e) {
                // a fixed lease that ended while later members were awaited: nothing is left to release
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        if (primary != null) {
            failures.forEach(primary::addSuppressed);
        } else {
            MultiLock.throwFirst(failures);
        }
    }

    /** One multi-hold in force: its members' tokens by member name, in the multi-lock's order. */
    static final class Active {
        final Map<String, Long> tokens;
        final AtomicBoolean lost = new AtomicBoolean();

        Active(Map<String, Long> tokens) {
            this.tokens = Collections.unmodifiableMap(new LinkedHashMap<>(tokens));
        }

        long token() {
            return tokens.values().iterator().next();
        }
    }

    /** A {@link MultiLockHold}: the members' holds, released together. */
    static final class Hold implements MultiLockHold {
        private final String name;
        private final MultiLockHolds holds;
        private final List<LockHold> members;
        private final Active active;
        private final AtomicBoolean released = new AtomicBoolean();

        Hold(String name, MultiLockHolds holds, List<LockHold> members) {
            this.name = name;
            this.holds = holds;
            this.members = List.copyOf(members);
            Map<String, Long> tokens = new LinkedHashMap<>();
            for (LockHold m : members) {
                tokens.put(m.name(), m.fencingToken());
            }
            this.active = holds.register(tokens);
            // a member lost before the registration above was not matched by the watch
            for (LockHold m : members) {
                if (!m.isValid()) {
                    holds.markLost(active, null);
                }
            }
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public long fencingToken() {
            return active.token();
        }

        @Override
        public Map<String, Long> fencingTokens() {
            return active.tokens;
        }

        @Override
        public List<LockHold> members() {
            return members;
        }

        @Override
        public boolean isValid() {
            if (released.get() || active.lost.get()) {
                return false;
            }
            for (LockHold m : members) {
                if (!m.isValid()) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void release() {
            if (!released.compareAndSet(false, true)) {
                throw new IllegalMonitorStateException("the hold of " + name + " was already released");
            }
            List<RuntimeException> failures = new ArrayList<>();
            List<@Nullable RuntimeException> outcomes = LockBatches.releaseAll(members);
            for (int i = members.size() - 1; i >= 0; i--) {
                RuntimeException e = outcomes.get(i);
                if (e != null) {
                    failures.add(e);
                }
            }
            finish(failures);
        }

        /** Releases every member through its own {@link LockHold#releaseAsync()}, all at once. */
        @Override
        public CompletableFuture<Void> releaseAsync() {
            if (!released.compareAndSet(false, true)) {
                return CompletableFuture.failedFuture(
                        new IllegalMonitorStateException("the hold of " + name + " was already released"));
            }
            List<CompletableFuture<Void>> releases = new ArrayList<>();
            for (int i = members.size() - 1; i >= 0; i--) {
                CompletableFuture<Void> f;
                try {
                    f = members.get(i).releaseAsync();
                } catch (RuntimeException e) {
                    f = CompletableFuture.failedFuture(e);
                }
                releases.add(f);
            }
            return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
                    .handle((v, ignored) -> {
                        List<RuntimeException> failures = new ArrayList<>();
                        for (CompletableFuture<Void> f : releases) {
                            try {
                                f.join();
                            } catch (CompletionException e) {
                                Throwable cause = e.getCause();
                                failures.add(cause instanceof RuntimeException r ? r : e);
                            } catch (RuntimeException e) {
                                failures.add(e);
                            }
                        }
                        finish(failures);
                        return null;
                    });
        }

        private void finish(List<RuntimeException> failures) {
            boolean lost = active.lost.get() || failures.stream().anyMatch(LockLostException.class::isInstance);
            if (lost) {
                holds.markLost(active, null);
            }
            holds.unregister(active, failures.isEmpty());
            if (lost) {
                LockLostException e = new LockLostException("the hold of " + name + " (token " + active.token()
                        + ") was lost before its release: a member's hold ended; its other members are released");
                failures.forEach(e::addSuppressed);
                throw e;
            }
            MultiLock.throwFirst(failures);
        }

        @Override
        public void close() {
            if (!released.get()) {
                release();
            }
        }

        @Override
        public String toString() {
            return "MultiLockHold[" + name + ", " + active.tokens + (isValid() ? "" : ", ended") + "]";
        }
    }
}
