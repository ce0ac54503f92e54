package io.distlock.zookeeper;

import io.distlock.LockInfo;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Role. The count-down latches of the ZooKeeper store (CounterStore): trySetCount, countDown, count and watchZero.
 *
 * Layout. A latch is the PERSISTENT child "latch" of its name node <root>/sync/<ZkNames.lockNode(name)> (the container
 * that read-write locks and semaphores of the name would use, so each sees the other in one getChildren). Its data is
 * the count, the expiry in milliseconds, and the ids of the count-downs it has counted, one per line. A latch at zero is
 * deleted: absent reads as 0, and the empty name node is reaped by the server.
 *
 * Counting. Every change is a compare-and-set on the node's version (setData or delete with the version read), tried
 * again when another client changed it in between. A count-down whose id is already in the data changes nothing, so a
 * call retried after a lost answer counts once; the last count-down deletes the node.
 *
 * Waiting. watchZero adds a persistent watch on the latch path: its deletion (zero, or an expiry sweep) wakes the
 * engine's awaiters, which read the count again; a reconnect wakes them too, since a change may have gone unseen.
 *
 * Expiry. A latch expires its expiry after its last change, judged by the server's clock: the node's mtime against
 * the server's time now, which the client reads as the mtime of a write to <root>/clock and advances with its
 * monotonic clock (no wall clocks of two machines are compared). An expired latch reads as absent wherever a step
 * meets it, and each client sweeps the latches at most once per SWEEP_EVERY (or per expiry, if shorter) in the
 * background, deleting the expired ones with the version read. ZooKeeper's TTL nodes would do this on the server but
 * need extendedTypesEnabled, which servers do not turn on by default; a container would be reaped with the counted
 * ids still needed.
 */
/** The count-down latches of the ZooKeeper store; see the overview comment in the source. */
final class ZkLatches {
    private static final Logger log = LoggerFactory.getLogger(ZkLatches.class);
    private static final long SWEEP_EVERY_NANOS = TimeUnit.MINUTES.toNanos(10);
    private static final long CLOCK_REFRESH_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final ZkOps ops;
    private final CuratorFramework curator;
    private final String clockPath;
    private final ExecutorService sweeper;
    private final AtomicLong lastSweep = new AtomicLong(System.nanoTime() - SWEEP_EVERY_NANOS);
    private volatile long clockMillis;
    private volatile long clockAtNanos;
    private volatile boolean clockRead;

    ZkLatches(ZkOps ops, String rootPath) {
        this.ops = ops;
        this.curator = ops.curator();
        this.clockPath = ZKPaths.makePath(rootPath, "clock");
        this.sweeper = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "distlock-zookeeper-latch-sweep");
            t.setDaemon(true);
            return t;
        });
    }

    /** A latch's data as stored. */
    private record Data(long count, long expiryMillis, Set<String> counted) {
        byte[] bytes() {
            StringBuilder b = new StringBuilder().append(count).append('\n').append(expiryMillis);
            for (String id : counted) {
                b.append('\n').append(id);
            }
            return b.toString().getBytes(StandardCharsets.UTF_8);
        }

        static Data parse(byte[] bytes) {
            String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
            Set<String> counted = new LinkedHashSet<>();
            for (int i = 2; i < lines.length; i++) {
                counted.add(lines[i]);
            }
            return new Data(Long.parseLong(lines[0]), Long.parseLong(lines[1]), counted);
        }
    }

    private String latchPath(LockKey key) {
        return ZKPaths.makePath(ops.syncPath(key), ZkClaimQueue.LATCH_NODE);
    }

    boolean trySetCount(LockKey key, long count, Duration expiry) {
        return ZkOps.call("trySetCount", () -> {
            maybeSweep(expiry);
            String path = latchPath(key);
            for (int tries = 0; tries < ZooKeeperLockStore.MAX_TRIES; tries++) {
                ops.ensureOpen();
                Stat stat = new Stat();
                Data data = read(path, stat);
                byte[] fresh = new Data(count, expiry.toMillis(), Set.of()).bytes();
                if (data == null) {
                    refuseClaims(key);
                    try {
                        var unused =
                                curator.create().withMode(CreateMode.PERSISTENT).forPath(path, fresh);
                        return true;
                    } catch (KeeperException.NodeExistsException e) {
                        continue; // set meanwhile: look again
                    } catch (KeeperException.NoNodeException e) {
                        ops.ensureNameNode(ops.syncPath(key), key.name());
                        continue;
                    }
                }
                if (data.count() > 0 && !expired(stat, data)) {
                    return false;
                }
                try {
                    var unused =
                            curator.setData().withVersion(stat.getVersion()).forPath(path, fresh);
                    return true;
                } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                    // changed meanwhile: look again
                }
            }
            throw new IllegalStateException(
                    "latch " + path + " kept changing under " + ZooKeeperLockStore.MAX_TRIES + " tries");
        });
    }

    long countDown(LockKey key, String callId, Duration expiry) {
        return ZkOps.call("countDown", () -> {
            maybeSweep(expiry);
            String path = latchPath(key);
            for (int tries = 0; tries < ZooKeeperLockStore.MAX_TRIES; tries++) {
                ops.ensureOpen();
                Stat stat = new Stat();
                Data data = read(path, stat);
                if (data == null) {
                    refuseClaims(key);
                    return 0L;
                }
                if (expired(stat, data)) {
                    deleteQuietly(path, stat.getVersion());
                    return 0L;
                }
                if (data.counted().contains(callId)) {
                    return data.count(); // a retried call: counted already
                }
                long next = data.count() - 1;
                try {
                    if (next <= 0) {
                        curator.delete().withVersion(stat.getVersion()).forPath(path);
                        return 0L;
                    }
                    Set<String> counted = new LinkedHashSet<>(data.counted());
                    counted.add(callId);
                    var unused = curator.setData()
                            .withVersion(stat.getVersion())
                            .forPath(path, new Data(next, expiry.toMillis(), counted).bytes());
                    return next;
                } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                    // changed meanwhile: look again (a retried call then finds its id, or the latch at zero)
                }
            }
            throw new IllegalStateException(
                    "latch " + path + " kept changing under " + ZooKeeperLockStore.MAX_TRIES + " tries");
        });
    }

    long count(LockKey key) {
        return ZkOps.call("count", () -> {
            Stat stat = new Stat();
            Data data = read(latchPath(key), stat);
            if (data == null) {
                refuseClaims(key);
                return 0L;
            }
            return expired(stat, data) ? 0L : data.count();
        });
    }

    /** The latch of {@code key} for the operator, if it is counting. */
    Optional<LockInfo> inspect(LockKey key) {
        return ZkOps.call("inspect", () -> {
            Stat stat = new Stat();
            Data data = read(latchPath(key), stat);
            if (data == null || expired(stat, data)) {
                return Optional.<LockInfo>empty();
            }
            long left = data.expiryMillis() - (serverNowMillis() - stat.getMtime());
            return Optional.of(LockInfo.ofLatch(key.name(), data.count(), Duration.ofMillis(Math.max(0, left))));
        });
    }

    Subscription watchZero(LockKey key, Runnable wakeUp) {
        String path = latchPath(key);
        Watcher watcher = new Watcher() {
            @Override
            public void process(WatchedEvent event) {
                Event.EventType type = event.getType();
                if (type == Event.EventType.NodeDeleted
                        || (type == Event.EventType.None && event.getState() == Event.KeeperState.SyncConnected)) {
                    wakeUp.run();
                }
            }
        };
        ZkOps.run("watchZero", () -> curator.watchers()
                .add()
                .withMode(AddWatchMode.PERSISTENT)
                .usingWatcher(watcher)
                .forPath(path));
        return () -> {
            try {
                curator.watchers()
                        .remove(watcher)
                        .ofType(Watcher.WatcherType.Any)
                        .quietly()
                        .inBackground()
                        .forPath(path);
            } catch (Exception e) {
                log.debug("distlock: could not remove the watch on {}", path, e);
            }
        };
    }

    void close() {
        sweeper.shutdownNow();
    }

    private @Nullable Data read(String path, Stat stat) throws Exception {
        try {
            return Data.parse(curator.getData().storingStatIn(stat).forPath(path));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /** A latch refuses a name with read-write lock or semaphore entries. */
    private void refuseClaims(LockKey key) throws Exception {
        List<ZkClaimQueue.Entry> q = ZkClaimQueue.queue(ops.childNames(ops.syncPath(key)));
        if (!q.isEmpty()) {
            throw new IllegalStateException(
                    "'" + key.name() + "' is in use as a " + q.get(0).kind().label() + ", not as a count-down latch");
        }
    }

    private void deleteQuietly(String path, int version) throws Exception {
        try {
            curator.delete().withVersion(version).forPath(path);
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            // changed or gone meanwhile
        }
    }

    private boolean expired(Stat stat, Data data) throws Exception {
        return serverNowMillis() - stat.getMtime() >= data.expiryMillis();
    }

    /** The server's time now: the mtime of a write to the clock node, advanced by the monotonic clock since. */
    private long serverNowMillis() throws Exception {
        long now = System.nanoTime();
        if (!clockRead || now - clockAtNanos > CLOCK_REFRESH_NANOS) {
            Stat stat;
            try {
                stat = curator.setData().forPath(clockPath, new byte[0]);
            } catch (KeeperException.NoNodeException e) {
                try {
                    var unused = curator.create().creatingParentsIfNeeded().forPath(clockPath, new byte[0]);
                } catch (KeeperException.NodeExistsException ignored) {
                    // made by another client
                }
                stat = curator.setData().forPath(clockPath, new byte[0]);
            }
            clockAtNanos = System.nanoTime();
            clockMillis = stat.getMtime();
            clockRead = true;
            now = clockAtNanos;
        }
        return clockMillis + TimeUnit.NANOSECONDS.toMillis(now - clockAtNanos);
    }

    /** Sweeps expired latches in the background, at most once per SWEEP_EVERY or per expiry, whichever is less. */
    private void maybeSweep(Duration expiry) {
        long every = Math.min(SWEEP_EVERY_NANOS, expiry.toNanos());
        long last = lastSweep.get();
        long now = System.nanoTime();
        if (now - last < every || !lastSweep.compareAndSet(last, now)) {
            return;
        }
        try {
            sweeper.execute(this::sweep);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void sweep() {
        try {
            List<String> names = new ArrayList<>(ops.childNames(ops.syncRoot()));
            for (String node : names) {
                if (ops.closed()) {
                    return;
                }
                String path = ZKPaths.makePath(ZKPaths.makePath(ops.syncRoot(), node), ZkClaimQueue.LATCH_NODE);
                Stat stat = new Stat();
                Data data = read(path, stat);
                if (data != null && expired(stat, data)) {
                    deleteQuietly(path, stat.getVersion());
                }
            }
        } catch (Exception e) {
            log.debug("distlock: latch sweep failed; the next one tries again", e);
        }
    }
}
