package io.distlock.internal;

import io.distlock.LockAdmin;
import io.distlock.LockInfo;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.LockKey;
import io.distlock.spi.LockStore;
import io.distlock.spi.OwnerId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The {@link LockAdmin} of a client: locks through the {@link LockStore}, read-write locks, semaphores and latches
 * through the claim store's {@link ClaimAdmin} where it has one. A name is one kind at a time, so an inspect asks the
 * lock store first and the claim store only when no lock is held.
 */
final class EngineAdmin implements LockAdmin {
    private final LockStore locks;
    private final @Nullable ClaimAdmin claims;

    EngineAdmin(LockStore locks, @Nullable ClaimAdmin claims) {
        this.locks = locks;
        this.claims = claims;
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        LockKey key = new LockKey(Checks.name(name));
        Optional<LockInfo> lock = StoreCalls.call("inspect", key, () -> locks.inspect(key));
        ClaimAdmin c = claims;
        if (lock.isPresent() || c == null) {
            return lock;
        }
        return StoreCalls.call("inspect", key, () -> c.inspect(key));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        Objects.requireNonNull(prefix, "prefix");
        Checks.positive(limit, "limit");
        LockKey pattern = new LockKey(prefix.isEmpty() ? "*" : prefix);
        List<LockInfo> all = new ArrayList<>(StoreCalls.call("list", pattern, () -> locks.list(prefix, limit)));
        ClaimAdmin c = claims;
        if (c != null) {
            all.addAll(StoreCalls.call("list", pattern, () -> c.list(prefix, limit)));
            all.sort(Comparator.comparing(LockInfo::name));
        }
        return all.size() <= limit ? all : List.copyOf(all.subList(0, limit));
    }

    @Override
    public Optional<LockInfo> forceUnlock(String name) {
        LockKey key = new LockKey(Checks.name(name));
        return StoreCalls.call("forceUnlock", key, () -> locks.forceRelease(key));
    }

    @Override
    public Optional<LockInfo> forceRelease(String name, String owner) {
        LockKey key = new LockKey(Checks.name(name));
        OwnerId id = new OwnerId(Objects.requireNonNull(owner, "owner"));
        Optional<LockInfo> lock = StoreCalls.call("forceRelease", key, () -> locks.inspect(key));
        if (lock.isPresent()) {
            // owner-checked in the store: a lock that changed hands since the inspect keeps its new holder
            boolean released = StoreCalls.call("forceRelease", key, () -> locks.release(key, id));
            return released ? lock : Optional.empty();
        }
        ClaimAdmin c = claims;
        return c == null ? Optional.empty() : StoreCalls.call("forceRelease", key, () -> c.forceRelease(key, id));
    }
}
