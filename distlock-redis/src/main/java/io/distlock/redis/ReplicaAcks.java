package io.distlock.redis;

import io.distlock.DistributedLockException;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.BiPredicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Acknowledgement
 *   With replicaAcks, every grant (an acquisition or a hand-off) is written on the connection that grantCommands
 *   chooses and followed on that same connection by WAIT minReplicas timeout, since WAIT counts the replicas that have
 *   every write of the connection it is sent on.
 *
 * Checking the server
 *   Lettuce may have reconnected to a newly promoted master between the grant and WAIT; WAIT would then count replicas
 *   of a server that never saw the grant. So a sufficient WAIT is followed by a GET of the hold on the same connection,
 *   which must show the new owner.
 *
 * Failing loudly
 *   Too few acknowledgements, a hold that is not the owner's, or a failed WAIT or GET undo the grant (an owner-checked
 *   release, best effort: otherwise the hold expires with its lease) and fail the call with DistributedLockException.
 *   A grant is never silently kept unreplicated.
 */
/** Makes each grant wait for replica acknowledgements ({@code WAIT}), and undoes it when they do not come. */
final class ReplicaAcks {
    private static final Logger log = LoggerFactory.getLogger(ReplicaAcks.class);

    private final RedisConnections redis;
    private final int minReplicas;
    private final Duration timeout;
    private final BiPredicate<LockKey, OwnerId> release;

    /**
     * @param minReplicas replicas that must acknowledge each grant; 0 for no waiting
     * @param release the owner-checked release that undoes a grant
     */
    ReplicaAcks(RedisConnections redis, int minReplicas, Duration timeout, BiPredicate<LockKey, OwnerId> release) {
        this.redis = redis;
        this.minReplicas = minReplicas;
        this.timeout = timeout;
        this.release = release;
    }

    /** Whether grants wait for replicas. */
    boolean required() {
        return minReplicas > 0;
    }

    /** The commands a grant of {@code holdKey} is written on: the ones its WAIT must share when required. */
    RedisClusterAsyncCommands<String, String> commandsFor(String holdKey) {
        return minReplicas > 0 ? redis.grantCommands(holdKey) : redis.commands().async();
    }

    /**
     * WAIT for the replicas, on the connection {@code on} that wrote the grant; if too few acknowledged it, undo it and
     * fail loudly (never a silent grant).
     */
    void await(RedisClusterAsyncCommands<String, String> on, LockKey key, String tag, OwnerId owner) {
        String holdKey = KeyLayout.key(tag, KeyLayout.HOLD);
        await(on, key, () -> on.get(holdKey).thenApply(owner.value()::equals), () -> undoGrant(key, owner));
    }

    /**
     * As {@link #await(RedisClusterAsyncCommands, LockKey, String, OwnerId)} for any grant: {@code held} asks, on the
     * same connection, whether the server that answered has the grant; {@code undo} ends it (best effort) when the
     * replicas do not acknowledge it.
     */
    void await(
            RedisClusterAsyncCommands<String, String> on,
            LockKey key,
            Supplier<CompletionStage<Boolean>> held,
            Runnable undo) {
        CommandRunner commands = redis.commands();
        long acked;
        try {
            acked = commands.await(on.waitForReplication(minReplicas, Math.max(1, timeout.toMillis())));
        } catch (RuntimeException e) {
            undo.run();
            throw e;
        }
        boolean ours = false;
        if (acked >= minReplicas) {
            // Lettuce may have reconnected to a newly promoted master between the grant and WAIT: WAIT would then
            // count replicas of a server that never saw the grant. Check that the server that answered has our hold.
            try {
                ours = Boolean.TRUE.equals(commands.await(held.get()));
            } catch (RuntimeException e) {
                undo.run();
                throw e;
            }
        }
        if (acked < minReplicas || !ours) {
            undo.run();
            throw new DistributedLockException(
                    "'" + key.name() + "' was granted but only " + acked + " of the required " + minReplicas
                            + " replicas acknowledged it within " + timeout + "; the grant was released",
                    new IllegalStateException("WAIT " + minReplicas + " " + timeout.toMillis() + " = " + acked));
        }
    }

    private void undoGrant(LockKey key, OwnerId owner) {
        try {
            var unused = release.test(key, owner);
        } catch (RuntimeException e) {
            log.warn("distlock: could not release an unreplicated grant for {}; it expires with its lease", owner, e);
        }
    }
}
