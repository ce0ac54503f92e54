package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.spring.DistributedLock;
import io.distlock.spring.DistributedLock.Kind;
import io.distlock.spring.DistributedLock.OnTimeout;
import io.distlock.spring.FencingToken;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The annotated methods the annotation tests call; each reports what it saw of its own lock. */
public class LockedJobs {
    private final LockClient client;
    private @Nullable LockedJobs self;

    public LockedJobs(LockClient client) {
        this.client = client;
    }

    /** The proxy of this bean, for calls that must go through the advice. */
    public void self(LockedJobs proxy) {
        this.self = proxy;
    }

    /** What a locked call saw: the lock name it ran under and both tokens. */
    public record Seen(String name, boolean heldByThread, long tokenParameter, long tokenOfHold) {}

    @DistributedLock(key = "'stats:' + #day")
    public Seen stats(String day, @FencingToken long token) {
        io.distlock.DistributedLock lock = client.lock("stats:" + day);
        return new Seen("stats:" + day, lock.isHeldByCurrentThread(), token, lock.fencingToken());
    }

    @DistributedLock(key = "#p0", waitTime = "0s")
    public String tryOnce(String key) {
        return "ran:" + key;
    }

    @DistributedLock(key = "#key", waitTime = "0s", onTimeout = OnTimeout.SKIP)
    public @Nullable String skipString(String key) {
        return "ran:" + key;
    }

    @DistributedLock(key = "#key", waitTime = "0s", onTimeout = OnTimeout.SKIP)
    public Optional<String> skipOptional(String key) {
        return Optional.of("ran:" + key);
    }

    @DistributedLock(key = "#key", waitTime = "0s", onTimeout = OnTimeout.SKIP)
    public int skipInt(String key) {
        return 7;
    }

    @DistributedLock(key = "#key", waitTime = "0s", onTimeout = OnTimeout.FALLBACK, fallback = "busy")
    public String withFallback(String key) {
        return "ran:" + key;
    }

    String busy(String key) {
        return "fallback:" + key;
    }

    @DistributedLock(key = "#key")
    public void fails(String key) {
        throw new IllegalStateException("work failed under " + key);
    }

    @DistributedLock(key = "#key", waitTime = "0s")
    public String outer(String key) {
        // through the proxy: the inner call advises again and must re-enter, not time out
        return "outer+" + java.util.Objects.requireNonNull(self).tryOnce(key);
    }

    @DistributedLock(key = "#key", kind = Kind.READ, waitTime = "0s", onTimeout = OnTimeout.SKIP)
    public @Nullable String read(String key) {
        return "read:" + key;
    }

    @DistributedLock(key = "#key", kind = Kind.WRITE, waitTime = "0s", onTimeout = OnTimeout.SKIP)
    public @Nullable String write(String key) {
        return "write:" + key;
    }

    @DistributedLock(key = "#key", leaseTime = "${test.lease:2s}")
    public boolean leased(String key) {
        return client.lock(key).isHeldByCurrentThread();
    }

    @DistributedLock
    public String unnamed() {
        return client.lock(LockedJobs.class.getName() + ".unnamed").isHeldByCurrentThread() ? "held" : "not held";
    }

    @DistributedLock(key = "#key")
    public String badToken(String key, @FencingToken String token) {
        return token;
    }

    @DistributedLock(key = "#missing")
    public String nullKey(String key) {
        return key;
    }
}
