package io.distlock.redis;

import io.distlock.DistributedLockException;
import io.distlock.LockInfo;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Algorithm
 *   The Redlock algorithm of the Redis distributed-lock page, over N independent nodes (no replication between
 *   them), quorum N/2 + 1. An attempt sends redlock-acquire.lua to every node at once and waits at most the node
 *   timeout for the answers. It wins when a quorum granted and the validity, lease - elapsed - drift (drift = 1% of
 *   the lease + 2 ms), is still positive; otherwise it deletes what it got (silently: no wake-up, so two clients that
 *   split the votes do not wake each other into another split) and answers Busy with a random back-off, or with the
 *   holders' remaining lease when a quorum is held by another owner. Keys are written with a lifetime of lease +
 *   drift, and the engine counts the lease from before the attempt was sent, so a hold ends in the client before it
 *   can end on a majority of nodes whose clocks run up to 1% fast.
 *
 * Fencing
 *   Each node keeps its own counter per name, incremented by each grant it votes for. The token of a grant is the
 *   highest counter among the nodes that granted it. So that the next grant's token is higher, the attempt then
 *   makes sure a quorum of nodes has a counter at least that high (redlock-fence.lua raises the others); any later
 *   quorum shares a node with that one. This holds only while no node loses its data: a node restarted empty has a
 *   counter of 0 and a lock key of nobody, so it can vote for a second owner and give a token that is not higher
 *   (docs/backends/redis.md, RedLock).
 *
 * Renewal, release, loss
 *   Renewal and release go to every node; a hold confirmed by fewer than a quorum is gone. When fewer than a quorum
 *   of nodes answer at all, the step fails with DistributedLockException: the engine keeps the hold until its last
 *   confirmed lease ends, then reports it lost; an acquire refuses at once instead of waiting. A node whose release
 *   answered "not there" after Lettuce wrote it again on a new connection may have ended the hold with the first
 *   write; when such nodes make up the quorum that the ended ones miss, the release is unknown, never "lost".
 *
 * Stalled clients
 *   A round waits for its answers until the node timeout. A thread that wakes more than a node timeout past that
 *   deadline was stalled (a GC pause, SIGSTOP): answers may have arrived meanwhile and still be unread by the I/O
 *   threads, so the round waits one more node timeout for them instead of counting their nodes as unreachable. An
 *   acquire stalled mid-round thus answers busy (its round outlasted the validity; what it got is deleted) rather
 *   than failing with "only 0 of 5 nodes answered". Lettuce may still have timed the commands out when the process
 *   resumed (its timer and its I/O threads race): a round that outlasted the validity with fewer than a quorum of
 *   answers deletes the name's hold of the owner on every node and answers busy too, never "unreachable".
 *
 * Joining nodes
 *   A grant can be a bare quorum: the other nodes were cut off, slow, or still held the previous owner's key when the
 *   round reached them. Such a hold would end when any one of its nodes is cut off. So a renewal that a quorum
 *   confirmed sends a second round, redlock-join.lua, to the nodes that answered that they have no hold for the name:
 *   each sets the owner's key there (NX: another owner's key is never touched) with the renewal's lifetime and raises
 *   its fence counter to the hold's token, like a node that granted it. A hold that fewer than a quorum confirmed is
 *   gone and never joins a node; a released hold is never renewed (the engine stops a hold's renewal, waiting for
 *   one in flight, before it releases it), so neither round can bring back a released hold.
 *
 * Wake-ups
 *   Every release publishes the name and token on one channel per key prefix, on every node; each client subscribes
 *   to it on every node once, and runs its waiters of the name. The N copies of one message are run once.
 */
/** The {@link ClaimStore} of a {@link RedLockClient}: exclusive locks by majority over independent Redis nodes. */
final class RedLockStore implements ClaimStore, ClaimAdmin {
    private static final Duration MAX_BACKOFF = Duration.ofMillis(200);

    private final List<RedLockNode> nodes = new ArrayList<>();
    private final int quorum;
    private final KeyLayout layout;
    private final String channel;
    private final Duration nodeTimeout;
    private final Map<String, List<Runnable>> waiters = new ConcurrentHashMap<>();
    private final Map<String, Boolean> recentMessages = java.util.Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > 4096;
        }
    });

    RedLockStore(List<io.lettuce.core.RedisURI> uris, KeyLayout layout, Duration nodeTimeout) {
        this.layout = layout;
        this.channel = layout.prefix() + "redlock:released";
        this.nodeTimeout = nodeTimeout;
        this.quorum = uris.size() / 2 + 1;
        for (io.lettuce.core.RedisURI uri : uris) {
            nodes.add(new RedLockNode(uri, nodeTimeout, channel, (ch, message) -> wake(message)));
        }
    }

    /**
     * Connects to every node that answers; fails unless a quorum does, or when two of them are the same server (the
     * same run_id: one server under two names would vote twice).
     */
    void connect() {
        int up = 0;
        for (RedLockNode n : nodes) {
            up += n.connect() ? 1 : 0;
        }
        if (up < quorum) {
            close();
            String message =
                    "RedLock needs " + quorum + " of " + nodes.size() + " nodes; " + up + " answered: " + nodes;
            throw new DistributedLockException(message, new java.net.ConnectException(message));
        }
        List<RedLockNode.Answer<String>> infos = all(n -> n.call(c -> c.info("server")));
        Map<String, List<RedLockNode>> byRunId = new LinkedHashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            String info = infos.get(i).value();
            String runId = info == null ? null : runId(info);
            if (runId != null) {
                byRunId.computeIfAbsent(runId, r -> new ArrayList<>()).add(nodes.get(i));
            }
        }
        for (Map.Entry<String, List<RedLockNode>> e : byRunId.entrySet()) {
            if (e.getValue().size() > 1) {
                close();
                throw new IllegalArgumentException("uris lists the same Redis server (run_id " + e.getKey() + ") "
                        + e.getValue().size() + " times, which would give it more than one vote: " + e.getValue());
            }
        }
    }

    private static @Nullable String runId(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("run_id:")) {
                return line.substring("run_id:".length()).strip();
            }
        }
        return null;
    }

    int quorum() {
        return quorum;
    }

    @Override
    public Set<Claim.Kind> kinds() {
        return Set.of(Claim.Kind.LOCK);
    }

    private static Duration drift(Duration lease) {
        return lease.dividedBy(100).plusMillis(2);
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        Duration lease = claim.lease().length();
        String[] keys = keys(claim.key());
        String lifetime = Long.toString(lease.plus(drift(lease)).toMillis());
        long start = System.nanoTime();
        List<RedLockNode.Answer<List<Object>>> answers = all(n -> n.eval(
                RedLockScripts.ACQUIRE,
                ScriptOutputType.MULTI,
                keys,
                claim.owner().value(),
                lifetime));
        long elapsed = System.nanoTime() - start;
        List<Integer> granted = new ArrayList<>();
        long token = 0;
        int answered = 0;
        long holderLeft = Long.MAX_VALUE;
        for (int i = 0; i < answers.size(); i++) {
            List<Object> a = answers.get(i).value();
            if (a == null) {
                continue;
            }
            answered++;
            if (LuaScript.number(a, 0) == 1) {
                granted.add(i);
                token = Math.max(token, LuaScript.number(a, 1));
            } else {
                long pttl = LuaScript.number(a, 2);
                holderLeft = Math.min(holderLeft, pttl < 0 ? 1000 : pttl);
            }
        }
        long validity = lease.minus(drift(lease)).toNanos() - elapsed;
        if (granted.size() >= quorum && validity > 0) {
            recordToken(claim, token, answers, granted);
            return Attempt.acquired(token);
        }
        if (answered < quorum && validity <= 0) {
            // the round outlasted the validity, so it is no grant whatever the nodes answered; answers are missing
            // because this client was stalled (the client library timed its commands out when it resumed) or because
            // the node timeout is not below the lease: the grants the missing answers may hold are deleted on every
            // node, and the acquire goes on within its wait, as after a busy answer
            releaseSilently(claim.key(), claim.owner(), allNodes());
            long backoff = ThreadLocalRandom.current().nextLong(1, MAX_BACKOFF.toMillis() + 1);
            return Attempt.busy(Duration.ofMillis(backoff));
        }
        releaseSilently(claim.key(), claim.owner(), granted);
        if (answered < quorum) {
            throw unreachable("acquire", claim.key(), answered, answers);
        }
        if (answered - granted.size() >= quorum) { // another owner holds a majority
            return Attempt.busy(Duration.ofMillis(Math.max(1, holderLeft)));
        }
        long backoff = ThreadLocalRandom.current().nextLong(1, MAX_BACKOFF.toMillis() + 1);
        return Attempt.busy(Duration.ofMillis(Math.min(backoff, Math.max(1, lease.toMillis() / 3))));
    }

    /** Makes sure a quorum of nodes has a fence counter of at least {@code token}; otherwise undoes the grant. */
    private void recordToken(
            Claim claim, long token, List<RedLockNode.Answer<List<Object>>> answers, List<Integer> granted) {
        int atLeast = 0;
        List<Integer> behind = new ArrayList<>();
        for (int i = 0; i < answers.size(); i++) {
            List<Object> a = answers.get(i).value();
            if (a != null && LuaScript.number(a, 1) >= token) {
                atLeast++;
            } else {
                behind.add(i);
            }
        }
        if (atLeast >= quorum) {
            return;
        }
        String[] fence = {fenceKey(claim.key())};
        List<RedLockNode.Answer<Long>> raised =
                on(behind, n -> n.eval(RedLockScripts.FENCE, ScriptOutputType.INTEGER, fence, Long.toString(token)));
        for (RedLockNode.Answer<Long> r : raised) {
            atLeast += r.value() != null ? 1 : 0;
        }
        if (atLeast < quorum) {
            releaseSilently(claim.key(), claim.owner(), granted);
            throw unreachable("fencing token " + token + " (the grant was undone)", claim.key(), atLeast, raised);
        }
    }

    private void releaseSilently(LockKey key, OwnerId owner, List<Integer> on) {
        if (!on.isEmpty()) {
            String[] hold = {holdKey(key)};
            var unused =
                    on(on, n -> n.eval(RedLockScripts.RELEASE, ScriptOutputType.INTEGER, hold, owner.value(), "", ""));
        }
    }

    @Override
    public void abandon(Claim claim) {
        var unused = releaseOnAll(claim.key(), claim.owner(), "abandon");
    }

    @Override
    public boolean release(HeldClaim hold) {
        return releaseOnAll(hold.key(), hold.owner(), "release") >= quorum;
    }

    private int releaseOnAll(LockKey key, OwnerId owner, String what) {
        String[] hold = {holdKey(key)};
        String message = ThreadLocalRandom.current().nextLong() + ":" + owner.value() + ":" + key.name();
        List<RedLockNode.Answer<Long>> answers =
                all(n -> n.evalOwnerChecked(RedLockScripts.RELEASE, hold, owner.value(), channel, message));
        int deleted = 0;
        int answered = 0;
        int unknown = 0;
        for (RedLockNode.Answer<Long> a : answers) {
            Long v = a.value();
            if (v != null && v == RedLockNode.UNKNOWN) {
                unknown++;
            } else if (v != null) {
                answered++;
                deleted += v.intValue();
            }
        }
        if (deleted < quorum && deleted + unknown >= quorum) {
            throw new DistributedLockException(
                    "RedLock " + what + " of '" + key + "': " + deleted + " of " + nodes.size() + " nodes ended the"
                            + " hold and " + unknown + " answered that it was not there after the command was written"
                            + " again on a new connection, so an earlier write may have ended it: whether this "
                            + what + " took effect on " + quorum + " nodes is unknown",
                    new IOException("a connection broke before the answer; Lettuce wrote the command again"));
        }
        if (deleted < quorum && answered < quorum) {
            throw unreachable(what, key, answered, answers);
        }
        return deleted;
    }

    @Override
    public Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        String lifetime = Long.toString(lease.plus(drift(lease)).toMillis());
        Map<HeldClaim, List<CompletableFuture<Long>>> sent = new LinkedHashMap<>();
        for (HeldClaim h : holds) {
            String[] hold = {holdKey(h.key())};
            List<CompletableFuture<Long>> fs = new ArrayList<>();
            for (RedLockNode n : nodes) {
                fs.add(n.eval(
                        RedLockScripts.RENEW,
                        ScriptOutputType.INTEGER,
                        hold,
                        h.owner().value(),
                        lifetime));
            }
            sent.put(h, fs);
        }
        long deadline = System.nanoTime() + nodeTimeout.toNanos();
        Set<HeldClaim> gone = new HashSet<>();
        Map<HeldClaim, List<Integer>> missing = new LinkedHashMap<>();
        for (Map.Entry<HeldClaim, List<CompletableFuture<Long>>> e : sent.entrySet()) {
            int answered = 0;
            List<Integer> confirmed = new ArrayList<>();
            List<Integer> without = new ArrayList<>();
            List<RedLockNode.Answer<Long>> answers = new ArrayList<>();
            for (int i = 0; i < nodes.size(); i++) {
                RedLockNode.Answer<Long> a = RedLockNode.await(e.getValue().get(i), deadline);
                answers.add(a);
                Long v = a.value();
                if (v != null) {
                    answered++;
                    if (v == 1) {
                        confirmed.add(i);
                    } else if (v == 0) {
                        without.add(i);
                    }
                }
            }
            if (confirmed.size() >= quorum) {
                if (!without.isEmpty()) {
                    missing.put(e.getKey(), without);
                }
                continue;
            }
            if (answered < quorum) {
                throw unreachable("renew", e.getKey().key(), answered, answers);
            }
            gone.add(e.getKey());
            releaseSilently(e.getKey().key(), e.getKey().owner(), confirmed); // a minority's leftovers
        }
        join(missing, lifetime);
        return gone;
    }

    /**
     * Sets each confirmed hold on the nodes that answered its renewal without it, in one round; a node that does not
     * answer is tried again at the next renewal.
     */
    private void join(Map<HeldClaim, List<Integer>> missing, String lifetime) {
        List<CompletableFuture<Long>> sent = new ArrayList<>();
        for (Map.Entry<HeldClaim, List<Integer>> e : missing.entrySet()) {
            HeldClaim h = e.getKey();
            String[] keys = keys(h.key());
            for (int i : e.getValue()) {
                sent.add(nodes.get(i)
                        .eval(
                                RedLockScripts.JOIN,
                                ScriptOutputType.INTEGER,
                                keys,
                                h.owner().value(),
                                lifetime,
                                Long.toString(h.fencingToken())));
            }
        }
        long deadline = System.nanoTime() + nodeTimeout.toNanos();
        for (CompletableFuture<Long> f : sent) {
            var unused = RedLockNode.await(f, deadline);
        }
    }

    @Override
    public Subscription subscribe(LockKey key, Runnable wakeUp) {
        List<Runnable> list = waiters.computeIfAbsent(key.name(), k -> new CopyOnWriteArrayList<>());
        list.add(wakeUp);
        return () -> waiters.computeIfPresent(key.name(), (k, l) -> {
            l.remove(wakeUp);
            return l.isEmpty() ? null : l;
        });
    }

    /** A release message from one node: runs the name's waiters, once for the N copies of the message. */
    private void wake(String message) {
        if (recentMessages.put(message, Boolean.TRUE) != null) {
            return;
        }
        int first = message.indexOf(':');
        int second = first < 0 ? -1 : message.indexOf(':', first + 1);
        // owner ids are <clientId>:<suffix>, so the name starts after the third ':'
        int third = second < 0 ? -1 : message.indexOf(':', second + 1);
        if (third < 0) {
            return;
        }
        List<Runnable> list = waiters.get(message.substring(third + 1));
        if (list != null) {
            list.forEach(Runnable::run);
        }
    }

    @Override
    public int available(LockKey key, Claim.Kind kind, int size) {
        return inspect(key).isPresent() ? 0 : 1;
    }

    // ---------------------------------------------------------------- ClaimAdmin

    @Override
    public Optional<LockInfo> inspect(LockKey key) {
        String hold = holdKey(key);
        String fence = fenceKey(key);
        String[] keys = {hold, fence};
        List<RedLockNode.Answer<List<Object>>> answers =
                all(n -> n.eval(RedLockScripts.INSPECT, ScriptOutputType.MULTI, keys));
        Map<String, List<long[]>> byOwner = new HashMap<>();
        int answered = 0;
        for (RedLockNode.Answer<List<Object>> a : answers) {
            List<Object> v = a.value();
            if (v != null) {
                answered++;
                String owner = String.valueOf(v.get(0));
                if (!owner.isEmpty()) {
                    byOwner.computeIfAbsent(owner, o -> new ArrayList<>())
                            .add(new long[] {LuaScript.number(v, 1), LuaScript.number(v, 2)});
                }
            }
        }
        if (answered < quorum) {
            throw unreachable("inspect", key, answered, answers);
        }
        for (Map.Entry<String, List<long[]>> e : byOwner.entrySet()) {
            if (e.getValue().size() >= quorum) {
                long left = Long.MAX_VALUE;
                long token = 0;
                for (long[] v : e.getValue()) {
                    left = Math.min(left, Math.max(0, v[0]));
                    token = Math.max(token, v[1]);
                }
                return Optional.of(new LockInfo(key.name(), e.getKey(), Duration.ofMillis(left), token, 0));
            }
        }
        return Optional.empty();
    }

    @Override
    public List<LockInfo> list(String prefix, int limit) {
        Set<String> names = new TreeSet<>();
        String pattern = layout.holdPattern(prefix);
        for (RedLockNode n : nodes) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                ScanCursor at = cursor;
                RedLockNode.Answer<KeyScanCursor<String>> page = RedLockNode.await(
                        n.call(c -> c.scan(at, ScanArgs.Builder.matches(pattern).limit(1000))),
                        System.nanoTime() + nodeTimeout.toNanos());
                KeyScanCursor<String> keys = page.value();
                if (keys == null) {
                    break;
                }
                for (String k : keys.getKeys()) {
                    String name = layout.nameOfHoldKey(k);
                    if (name != null) {
                        names.add(name);
                    }
                }
                cursor = keys;
            } while (!cursor.isFinished());
        }
        List<LockInfo> out = new ArrayList<>();
        for (String name : names) {
            if (out.size() >= limit) {
                break;
            }
            inspect(new LockKey(name)).ifPresent(out::add);
        }
        return out;
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key) {
        return forceRelease(key, "");
    }

    @Override
    public Optional<LockInfo> forceRelease(LockKey key, OwnerId owner) {
        return forceRelease(key, owner.value());
    }

    private Optional<LockInfo> forceRelease(LockKey key, String owner) {
        Optional<LockInfo> before = inspect(key);
        if (before.isEmpty() || (!owner.isEmpty() && !before.get().owner().equals(owner))) {
            return Optional.empty();
        }
        String[] hold = {holdKey(key)};
        String message =
                ThreadLocalRandom.current().nextLong() + ":" + before.get().owner() + ":" + key.name();
        var unused =
                all(n -> n.eval(RedLockScripts.FORCE_RELEASE, ScriptOutputType.INTEGER, hold, owner, channel, message));
        return before;
    }

    // ---------------------------------------------------------------- rounds

    /** Sends {@code op} to every node at once and waits at most the node timeout for the answers. */
    private <T> List<RedLockNode.Answer<T>> all(Function<RedLockNode, CompletableFuture<T>> op) {
        return on(allNodes(), op);
    }

    private List<Integer> allNodes() {
        List<Integer> every = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            every.add(i);
        }
        return every;
    }

    private <T> List<RedLockNode.Answer<T>> on(List<Integer> which, Function<RedLockNode, CompletableFuture<T>> op) {
        List<CompletableFuture<T>> sent = new ArrayList<>();
        for (int i : which) {
            sent.add(op.apply(nodes.get(i)));
        }
        long deadline = System.nanoTime() + nodeTimeout.toNanos();
        boolean stalled = false;
        List<RedLockNode.Answer<T>> answers = new ArrayList<>();
        for (CompletableFuture<T> f : sent) {
            waitQuietly(f, deadline);
            if (!stalled && !f.isDone() && System.nanoTime() - deadline > nodeTimeout.toNanos()) {
                // this thread woke more than a node timeout past the round's deadline: it (or the whole process: a GC
                // pause, SIGSTOP) was stalled, and answers that arrived meanwhile may still be unread; the I/O threads
                // get one more node timeout to deliver them, so that a stalled client is not told the nodes are
                // unreachable (the caller then judges the answers: a round that outlasted the validity is no grant)
                stalled = true;
                deadline = System.nanoTime() + nodeTimeout.toNanos();
            }
            answers.add(RedLockNode.await(f, deadline));
        }
        return answers;
    }

    /** Waits for {@code f} until {@code deadline} at most, without cancelling it or reading its outcome. */
    private static void waitQuietly(CompletableFuture<?> f, long deadline) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || f.isDone()) {
            return;
        }
        try {
            f.get(left, java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException
                | java.util.concurrent.ExecutionException
                | java.util.concurrent.CancellationException e) {
            // judged by RedLockNode.await next
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // a round is bounded by the node timeout: RedLockNode.await finishes it
        }
    }

    private DistributedLockException unreachable(
            String what, LockKey key, int answered, List<? extends RedLockNode.Answer<?>> answers) {
        String message = "RedLock " + what + " of '" + key + "': only " + answered + " of " + nodes.size()
                + " nodes answered, " + quorum + " needed " + nodes;
        Throwable cause = null;
        for (RedLockNode.Answer<?> a : answers) {
            Throwable error = a.error();
            if (error != null) {
                if (cause == null) {
                    cause = error;
                } else {
                    cause.addSuppressed(error);
                }
            }
        }
        return new DistributedLockException(message, cause != null ? cause : new IllegalStateException(message));
    }

    private String holdKey(LockKey key) {
        return KeyLayout.key(layout.tag(key.name()), KeyLayout.HOLD);
    }

    private String fenceKey(LockKey key) {
        return KeyLayout.key(layout.tag(key.name()), KeyLayout.FENCE);
    }

    private String[] keys(LockKey key) {
        String tag = layout.tag(key.name());
        return new String[] {KeyLayout.key(tag, KeyLayout.HOLD), KeyLayout.key(tag, KeyLayout.FENCE)};
    }

    @Override
    public void close() {
        for (RedLockNode n : nodes) {
            n.close();
        }
    }

    @Override
    public String toString() {
        return "RedLockStore" + nodes;
    }
}
