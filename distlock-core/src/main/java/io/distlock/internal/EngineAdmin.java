package io.distlock.internal;

import io.distlock.LockAdmin;
import io.distlock.LockInfo;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The {@link LockAdmin} of a client: the checked arguments go to the store's {@link ClaimAdmin}. */
final class EngineAdmin implements LockAdmin {
    private final ClaimAdmin store;

    EngineAdmin(ClaimAdmin store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    @Override
    public Optional<LockInfo> inspect(String name) {
        return inspectKey(new LockKey(Checks.name(name)));
    }

    Optional<LockInfo> inspectKey(LockKey key) {
        return StoreCalls.call("inspect", key, () -> store.inspect(key));
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        Objects.requireNonNull(prefix, "prefix");
        Checks.positive(limit, "limit");
        LockKey pattern = new LockKey(prefix.isEmpty() ? "*" : prefix);
        return StoreCalls.call("list", pattern, () -> store.list(prefix, limit));
    }

    @Override
    public Optional<LockInfo> forceUnlock(String name) {
        LockKey key = new LockKey(Checks.name(name));
        return StoreCalls.call("forceUnlock", key, () -> store.forceRelease(key));
    }

    @Override
    public Optional<LockInfo> forceRelease(String name, String owner) {
        LockKey key = new LockKey(Checks.name(name));
        OwnerId id = new OwnerId(Objects.requireNonNull(owner, "owner"));
        return StoreCalls.call("forceRelease", key, () -> store.forceRelease(key, id));
    }
}
