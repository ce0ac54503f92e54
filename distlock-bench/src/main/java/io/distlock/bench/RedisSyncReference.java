package io.distlock.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/*
 * Overview
 *
 * The least a Redis semaphore and read-write lock can do and still meet issue 21's requirements, as a yardstick for
 * the throughput targets: plain Lettuce, one command connection and one pub/sub connection per client, one Lua script
 * per step (loaded once, run by EVALSHA).
 *
 * Semaphore of a name (every key in the slot of {name}):
 *   {name}:sh  zset  hold owner -> expiry (server time, ms)   the permits held; expired entries swept by acquire
 *   {name}:sw  zset  client id -> deadline (server time, ms)  clients with a waiting thread; release publishes only
 *                                                              while a live one is there
 *   {name}:f   the fencing counter: every grant takes the next token
 *   {name}:sc  the wake channel: a release publishes '1' (one permit back); each client wakes one local waiter
 * Acquire = sweep expired holds; grant when fewer than `size` are held (ZADD owner now+lease, INCR fence), else
 * register the client as waiting and answer the time until the first lease ends. Release = owner-checked ZREM (a hold
 * whose lease ended is not released, it is reported lost), then PUBLISH only when a live waiter is registered.
 *
 * FIFO semaphore of a name (the same, with the queue the contract asks for: a waiting acquire holds back later ones):
 *   {name}:qh  zset  hold owner -> expiry (server time, ms)
 *   {name}:qt  hash  hold owner -> its token                  so an attempt finds a grant whose message was lost
 *   {name}:qq  zset  waiter owner -> arrival number            the queue, in arrival order
 *   {name}:qd  zset  waiter owner -> deadline                  a waiter that stops coming back is evicted
 *   {name}:qn  the arrival counter; {name}:f the fencing counter; {name}:qc the grant channel
 * Acquire = return the token when a release already granted it; else sweep expired holds and dead waiters; grant
 * when the free permits outnumber the waiters queued before it; else queue it (once) and refresh its deadline.
 * Release = owner-checked ZREM, then grant the freed permits to the queue's head in the same script, publishing
 * "owner:token" per grant: the waiter wakes holding its permit, with no attempt of its own (one PUBLISH per permit
 * released, whatever the queue's length). A waiter's lease is the releasing hold's (every hold of the run has one).
 *
 * Read-write lock of a name:
 *   {name}:rr  zset  reader owner -> expiry                    each read hold with its own lease
 *   {name}:rw  string  the writer's owner, PX lease             the write hold
 *   {name}:rq  zset  waiting writer owner -> deadline           writer preference: a live entry blocks new readers
 *   {name}:rv  zset  client id -> deadline                      clients with a waiting reader
 *   {name}:f   the fencing counter: every write grant takes the next token
 *   {name}:rc  the wake channel: 'r' after the last reader leaves while a writer waits, 'w' after a write release
 *              while anybody waits; a client wakes all its waiters on either
 * A waiting writer's entry has a deadline (the waiter timeout) refreshed on each of its attempts, so a writer that died
 * while waiting blocks readers for at most that long.
 *
 * Waiting: a thread reads its client's wake generation for the name, attempts, and when refused parks until the
 * generation moves or a bounded re-check (the smaller of the retry hint and RECHECK_MS) ends: a message that arrives
 * between the refusal and the park is not lost, and a lost message costs at most one re-check.
 *
 * Left out, on purpose (not needed in a short benchmark; each would cost the same for the reference and distlock):
 * lease renewal (a watchdog renewing every hold of a client in one batched script per tick: off the hot path with
 * 30 s leases and 20 µs holds), re-entrancy, downgrade, fairness among the waiters of `Semaphore` and the read-write
 * lock (no queue: any woken waiter may win; FifoSemaphore has one),
 * the replica acknowledgement (WAIT), NOSCRIPT fallback after a server restart, a name used as two kinds, key TTL per
 * hold (each key's TTL is the one lease length every hold of the run uses), interruption and timeouts of acquire,
 * Cluster, and the engine's local structures (one hold at a time per Lock object: the lock objects are not shared
 * between threads).
 */
/** A minimal owned, leased, fenced Redis semaphore and read-write lock (the benchmark's reference; not a product). */
final class RedisSyncReference {
    /** The longest a refused attempt parks before it tries again when no message comes. */
    static final long RECHECK_MS = 100;

    /** How long a waiter's registration (a waiting writer's preference) outlives its last attempt. */
    static final long WAITER_TIMEOUT_MS = 3 * RECHECK_MS;

    private static final String NOW = "local t = redis.call('TIME')\n"
            + "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

    // KEYS: holds, waiters, fence. ARGV: size, owner, lease ms, client id, waiter timeout ms.
    // Returns the token (> 0) when granted, else -(ms until the first lease ends).
    private static final String SEM_ACQUIRE = NOW
            + "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
            + "if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then\n"
            + "  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])\n"
            + "  redis.call('PEXPIRE', KEYS[1], ARGV[3])\n"
            + "  return redis.call('INCR', KEYS[3])\n"
            + "end\n"
            + "redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[4])\n"
            + "redis.call('PEXPIRE', KEYS[2], ARGV[5])\n"
            + "local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
            + "return -math.max(1, tonumber(first[2]) - now)\n";

    // KEYS: holds, waiters, channel. ARGV: owner. Returns 1 when released, 0 when the hold was gone.
    private static final String SEM_RELEASE = NOW
            + "local e = redis.call('ZSCORE', KEYS[1], ARGV[1])\n"
            + "if not e then return 0 end\n"
            + "redis.call('ZREM', KEYS[1], ARGV[1])\n"
            + "if tonumber(e) <= now then return 0 end\n"
            + "if redis.call('ZCOUNT', KEYS[2], now, '+inf') > 0 then redis.call('PUBLISH', KEYS[3], '1') end\n"
            + "return 1\n";

    private static final String FIFO_SWEEP = "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
            + "local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)\n"
            + "if #dead > 0 then\n"
            + "  redis.call('ZREM', KEYS[3], unpack(dead))\n"
            + "  redis.call('ZREM', KEYS[4], unpack(dead))\n"
            + "end\n";

    // KEYS: holds, tokens, queue, deadlines, fence, arrivals. ARGV: size, owner, lease ms, waiter timeout ms.
    // Returns the token (> 0) when granted (now or by a release), else -(retry hint ms).
    private static final String FIFO_ACQUIRE = NOW
            + "if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return tonumber(redis.call('HGET', KEYS[2], ARGV[2])) end\n"
            + FIFO_SWEEP
            + "local rank = redis.call('ZRANK', KEYS[3], ARGV[2])\n"
            + "local ahead = rank or redis.call('ZCARD', KEYS[3])\n"
            + "if ahead < tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1]) then\n"
            + "  if rank then\n"
            + "    redis.call('ZREM', KEYS[3], ARGV[2])\n"
            + "    redis.call('ZREM', KEYS[4], ARGV[2])\n"
            + "  end\n"
            + "  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])\n"
            + "  redis.call('PEXPIRE', KEYS[1], ARGV[3])\n"
            + "  local t = redis.call('INCR', KEYS[5])\n"
            + "  redis.call('HSET', KEYS[2], ARGV[2], t)\n"
            + "  redis.call('PEXPIRE', KEYS[2], ARGV[3])\n"
            + "  return t\n"
            + "end\n"
            + "if not rank then redis.call('ZADD', KEYS[3], redis.call('INCR', KEYS[6]), ARGV[2]) end\n"
            + "redis.call('ZADD', KEYS[4], now + tonumber(ARGV[4]), ARGV[2])\n"
            + "redis.call('PEXPIRE', KEYS[3], ARGV[4])\n"
            + "redis.call('PEXPIRE', KEYS[4], ARGV[4])\n"
            + "redis.call('PEXPIRE', KEYS[6], ARGV[4])\n"
            + "return -math.floor(tonumber(ARGV[4]) / 3)\n";

    // KEYS: holds, tokens, queue, deadlines, fence, channel. ARGV: size, owner, lease ms, '1' to publish the grants.
    // Returns {1, owner, token, ...} with the grants when released, {0} when the hold was gone; grants the freed
    // permits to the queue's head.
    private static final String FIFO_RELEASE = NOW
            + "local e = redis.call('ZSCORE', KEYS[1], ARGV[2])\n"
            + "if not e then return {0} end\n"
            + "redis.call('ZREM', KEYS[1], ARGV[2])\n"
            + "redis.call('HDEL', KEYS[2], ARGV[2])\n"
            + "if tonumber(e) <= now then return {0} end\n"
            + "local out = {1}\n"
            + FIFO_SWEEP
            + "local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])\n"
            + "if free > 0 then\n"
            + "  for _, w in ipairs(redis.call('ZRANGE', KEYS[3], 0, free - 1)) do\n"
            + "    redis.call('ZREM', KEYS[3], w)\n"
            + "    redis.call('ZREM', KEYS[4], w)\n"
            + "    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), w)\n"
            + "    local t = redis.call('INCR', KEYS[5])\n"
            + "    redis.call('HSET', KEYS[2], w, t)\n"
            + "    if ARGV[4] == '1' then redis.call('PUBLISH', KEYS[6], w .. ':' .. t) end\n"
            + "    out[#out + 1] = w\n"
            + "    out[#out + 1] = t\n"
            + "  end\n"
            + "  redis.call('PEXPIRE', KEYS[1], ARGV[3])\n"
            + "  redis.call('PEXPIRE', KEYS[2], ARGV[3])\n"
            + "end\n"
            + "return out\n";

    // KEYS: readers, writer, waiting writers, waiting readers. ARGV: owner, lease ms, client id, waiter timeout ms.
    // Returns 1 when granted, else -(retry hint ms).
    private static final String READ_ACQUIRE = NOW
            + "local w = redis.call('PTTL', KEYS[2])\n"
            + "local blocked = w > 0\n"
            + "if not blocked and redis.call('EXISTS', KEYS[3]) == 1 then\n"
            + "  blocked = redis.call('ZCOUNT', KEYS[3], now, '+inf') > 0\n"
            + "end\n"
            + "if blocked then\n"
            + "  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[4]), ARGV[3])\n"
            + "  redis.call('PEXPIRE', KEYS[4], ARGV[4])\n"
            + "  if w > 0 then return -w end\n"
            + "  return -tonumber(ARGV[4])\n"
            + "end\n"
            + "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])\n"
            + "redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
            + "return 1\n";

    // KEYS: readers, writer, waiting writers, fence. ARGV: owner, lease ms, waiter timeout ms.
    // Returns the token (> 0) when granted, else -(retry hint ms).
    private static final String WRITE_ACQUIRE = NOW
            + "local w = redis.call('PTTL', KEYS[2])\n"
            + "local wait = w\n"
            + "if w <= 0 then\n"
            + "  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
            + "  local r = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')\n"
            + "  if not r[2] then\n"
            + "    redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])\n"
            + "    redis.call('ZREM', KEYS[3], ARGV[1])\n"
            + "    return redis.call('INCR', KEYS[4])\n"
            + "  end\n"
            + "  wait = tonumber(r[2]) - now\n"
            + "end\n"
            + "redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[1])\n"
            + "redis.call('PEXPIRE', KEYS[3], ARGV[3])\n"
            + "return -math.max(1, wait)\n";

    // KEYS: readers, waiting writers, channel. ARGV: owner. Returns 1 when released, 0 when the hold was gone.
    private static final String READ_RELEASE = NOW
            + "local e = redis.call('ZSCORE', KEYS[1], ARGV[1])\n"
            + "if not e then return 0 end\n"
            + "redis.call('ZREM', KEYS[1], ARGV[1])\n"
            + "if tonumber(e) <= now then return 0 end\n"
            + "if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('ZCOUNT', KEYS[1], now, '+inf') == 0\n"
            + "    and redis.call('ZCOUNT', KEYS[2], now, '+inf') > 0 then\n"
            + "  redis.call('PUBLISH', KEYS[3], 'r')\n"
            + "end\n"
            + "return 1\n";

    // KEYS: writer, waiting writers, waiting readers, channel. ARGV: owner. Returns 1 when released, 0 when gone.
    private static final String WRITE_RELEASE = NOW
            + "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
            + "redis.call('DEL', KEYS[1])\n"
            + "if redis.call('ZCOUNT', KEYS[2], now, '+inf') > 0 or redis.call('ZCOUNT', KEYS[3], now, '+inf') > 0"
            + " then\n"
            + "  redis.call('PUBLISH', KEYS[4], 'w')\n"
            + "end\n"
            + "return 1\n";

    private RedisSyncReference() {}

    /** One client: a command connection shared by its threads, a pub/sub connection, and its waiters' signals. */
    static final class Client implements AutoCloseable {
        private final RedisClient redis;
        private final StatefulRedisConnection<String, String> connection;
        private final StatefulRedisPubSubConnection<String, String> pubsub;
        private final RedisCommands<String, String> commands;
        private final String id = UUID.randomUUID().toString().substring(0, 8);
        private final AtomicLong holds = new AtomicLong();
        private final ConcurrentHashMap<String, Signal> signals = new ConcurrentHashMap<>();
        private final ConcurrentHashMap<String, FifoWaiter> fifoWaiters = new ConcurrentHashMap<>();
        private final String prefix;
        private final String semAcquire;
        private final String semRelease;
        private final String readAcquire;
        private final String writeAcquire;
        private final String readRelease;
        private final String writeRelease;
        private final String fifoAcquire;
        private final String fifoRelease;

        Client(String uri, String prefix) {
            this.prefix = prefix;
            redis = RedisClient.create(uri);
            connection = redis.connect();
            commands = connection.sync();
            pubsub = redis.connectPubSub();
            pubsub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    if (channel.endsWith(":qc")) {
                        int colon = message.lastIndexOf(':');
                        FifoWaiter w = fifoWaiters.get(message.substring(0, colon));
                        if (w != null) {
                            w.grant(Long.parseLong(message.substring(colon + 1)));
                        }
                        return;
                    }
                    Signal s = signals.get(channel);
                    if (s != null) {
                        s.wake(message.equals("1") ? 1 : Integer.MAX_VALUE);
                    }
                }
            });
            semAcquire = commands.scriptLoad(SEM_ACQUIRE);
            semRelease = commands.scriptLoad(SEM_RELEASE);
            readAcquire = commands.scriptLoad(READ_ACQUIRE);
            writeAcquire = commands.scriptLoad(WRITE_ACQUIRE);
            readRelease = commands.scriptLoad(READ_RELEASE);
            writeRelease = commands.scriptLoad(WRITE_RELEASE);
            fifoAcquire = commands.scriptLoad(FIFO_ACQUIRE);
            fifoRelease = commands.scriptLoad(FIFO_RELEASE);
        }

        /**
         * A FIFO semaphore of {@code size} permits; holds lease for {@code leaseMs}. A waiter granted by a release is
         * woken by the grant's message ({@code wakeByMessage}), or else by the releasing thread once the release's
         * reply has come (which only reaches the waiters of this client: for the one-client benchmark only).
         */
        FifoSemaphore fifoSemaphore(String name, int size, long leaseMs, boolean wakeByMessage) {
            return new FifoSemaphore(this, prefix + "{" + name + "}", size, leaseMs, wakeByMessage);
        }

        /** A semaphore of {@code size} permits; holds lease for {@code leaseMs}. */
        Semaphore semaphore(String name, int size, long leaseMs) {
            return new Semaphore(this, prefix + "{" + name + "}", size, leaseMs);
        }

        /** A read-write lock for one thread's use at a time; holds lease for {@code leaseMs}. */
        RwLock readWriteLock(String name, long leaseMs) {
            return new RwLock(this, prefix + "{" + name + "}", leaseMs);
        }

        private Signal signal(String channel) {
            return signals.computeIfAbsent(channel, c -> {
                pubsub.sync().subscribe(c);
                return new Signal();
            });
        }

        private String newOwner() {
            return id + ":" + holds.incrementAndGet();
        }

        private long eval(String sha, String[] keys, String... args) {
            Long r = commands.evalsha(sha, ScriptOutputType.INTEGER, keys, args);
            return r == null ? 0 : r;
        }

        @Override
        public void close() {
            pubsub.close();
            connection.close();
            redis.shutdown();
        }
    }

    /** The wake-ups of one name in one client: a generation moved by each message. */
    static final class Signal {
        private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        private final Condition moved = lock.newCondition();
        private long generation;

        long generation() {
            lock.lock();
            try {
                return generation;
            } finally {
                lock.unlock();
            }
        }

        void wake(int waiters) {
            lock.lock();
            try {
                generation++;
                if (waiters == Integer.MAX_VALUE) {
                    moved.signalAll();
                } else {
                    for (int i = 0; i < waiters; i++) {
                        moved.signal();
                    }
                }
            } finally {
                lock.unlock();
            }
        }

        /** Parks until the generation is past {@code seen} or {@code millis} pass. */
        void await(long seen, long millis) throws InterruptedException {
            long nanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, Math.min(millis, RECHECK_MS)));
            lock.lock();
            try {
                while (generation == seen && nanos > 0) {
                    nanos = moved.awaitNanos(nanos);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** A permit hold: its owner id and fencing token. */
    record Permit(String owner, long token) {}

    /** The semaphore. */
    static final class Semaphore {
        private final Client client;
        private final String[] acquireKeys;
        private final String[] releaseKeys;
        private final String size;
        private final String lease;
        private final Signal signal;

        private Semaphore(Client client, String key, int size, long leaseMs) {
            this.client = client;
            String channel = key + ":sc";
            acquireKeys = new String[] {key + ":sh", key + ":sw", key + ":f"};
            releaseKeys = new String[] {key + ":sh", key + ":sw", channel};
            this.size = Integer.toString(size);
            this.lease = Long.toString(leaseMs);
            this.signal = client.signal(channel);
        }

        Permit acquire() throws InterruptedException {
            String owner = client.newOwner();
            String timeout = Long.toString(WAITER_TIMEOUT_MS);
            while (true) {
                long seen = signal.generation();
                long r = client.eval(client.semAcquire, acquireKeys, size, owner, lease, client.id, timeout);
                if (r > 0) {
                    return new Permit(owner, r);
                }
                signal.await(seen, -r);
            }
        }

        void release(Permit p) {
            if (client.eval(client.semRelease, releaseKeys, p.owner()) != 1) {
                throw new IllegalMonitorStateException("permit lost: " + p);
            }
        }
    }

    /** A waiting thread of a FIFO semaphore: a release's grant message hands it its token. */
    static final class FifoWaiter {
        private final Thread thread = Thread.currentThread();
        private volatile long token;

        void grant(long t) {
            token = t;
            java.util.concurrent.locks.LockSupport.unpark(thread);
        }

        /** The token a release granted, or 0 after {@code millis} without one. */
        long await(long millis) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            long left;
            while (token == 0 && (left = deadline - System.nanoTime()) > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(this, left);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
            return token;
        }
    }

    /** The FIFO semaphore: waiters are granted in arrival order, by the release that frees their permit. */
    static final class FifoSemaphore {
        private final Client client;
        private final String[] acquireKeys;
        private final String[] releaseKeys;
        private final String size;
        private final String lease;

        private final String publish;

        private FifoSemaphore(Client client, String key, int size, long leaseMs, boolean wakeByMessage) {
            this.publish = wakeByMessage ? "1" : "0";
            this.client = client;
            String channel = key + ":qc";
            String[] base = {key + ":qh", key + ":qt", key + ":qq", key + ":qd", key + ":f"};
            acquireKeys = new String[] {base[0], base[1], base[2], base[3], base[4], key + ":qn"};
            releaseKeys = new String[] {base[0], base[1], base[2], base[3], base[4], channel};
            this.size = Integer.toString(size);
            this.lease = Long.toString(leaseMs);
            client.signal(channel); // subscribes; grants are routed to fifoWaiters by owner
        }

        Permit acquire() throws InterruptedException {
            String owner = client.newOwner();
            String timeout = Long.toString(WAITER_TIMEOUT_MS);
            FifoWaiter w = new FifoWaiter();
            client.fifoWaiters.put(owner, w); // before the first attempt: a grant right after it is not lost
            try {
                while (true) {
                    long r = client.eval(client.fifoAcquire, acquireKeys, size, owner, lease, timeout);
                    if (r > 0) {
                        return new Permit(owner, r);
                    }
                    long t = w.await(Math.min(-r, RECHECK_MS));
                    if (t > 0) {
                        return new Permit(owner, t);
                    }
                }
            } finally {
                client.fifoWaiters.remove(owner);
            }
        }

        void release(Permit p) {
            java.util.List<Object> r = client.commands.evalsha(
                    client.fifoRelease, ScriptOutputType.MULTI, releaseKeys, size, p.owner(), lease, publish);
            if (r == null || r.isEmpty() || ((Long) r.get(0)) != 1L) {
                throw new IllegalMonitorStateException("permit lost: " + p);
            }
            if (publish.equals("0")) {
                for (int i = 1; i + 1 < r.size(); i += 2) {
                    FifoWaiter w = client.fifoWaiters.get(String.valueOf(r.get(i)));
                    if (w != null) {
                        w.grant((Long) r.get(i + 1));
                    }
                }
            }
        }
    }

    /** The read-write lock (the {@link Lock}s support lock() and unlock() only; one hold at a time each). */
    static final class RwLock implements ReadWriteLock {
        private final Client client;
        private final String lease;
        private final Signal signal;
        private final String[] readAcquireKeys;
        private final String[] writeAcquireKeys;
        private final String[] readReleaseKeys;
        private final String[] writeReleaseKeys;
        private final Lock read = new Part(true);
        private final Lock write = new Part(false);

        private RwLock(Client client, String key, long leaseMs) {
            this.client = client;
            this.lease = Long.toString(leaseMs);
            String readers = key + ":rr";
            String writer = key + ":rw";
            String waitingWriters = key + ":rq";
            String waitingReaders = key + ":rv";
            String channel = key + ":rc";
            readAcquireKeys = new String[] {readers, writer, waitingWriters, waitingReaders};
            writeAcquireKeys = new String[] {readers, writer, waitingWriters, key + ":f"};
            readReleaseKeys = new String[] {readers, waitingWriters, channel};
            writeReleaseKeys = new String[] {writer, waitingWriters, waitingReaders, channel};
            signal = client.signal(channel);
        }

        @Override
        public Lock readLock() {
            return read;
        }

        @Override
        public Lock writeLock() {
            return write;
        }

        private final class Part implements Lock {
            private final boolean shared;
            private String owner = "";
            private long token;

            Part(boolean shared) {
                this.shared = shared;
            }

            @Override
            public void lock() {
                owner = client.newOwner();
                String timeout = Long.toString(WAITER_TIMEOUT_MS);
                try {
                    while (true) {
                        long seen = signal.generation();
                        long r = shared
                                ? client.eval(client.readAcquire, readAcquireKeys, owner, lease, client.id, timeout)
                                : client.eval(client.writeAcquire, writeAcquireKeys, owner, lease, timeout);
                        if (r > 0) {
                            token = r;
                            return;
                        }
                        signal.await(seen, -r);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting", e);
                }
            }

            @Override
            public void unlock() {
                long r = shared
                        ? client.eval(client.readRelease, readReleaseKeys, owner)
                        : client.eval(client.writeRelease, writeReleaseKeys, owner);
                if (r != 1) {
                    throw new IllegalMonitorStateException("hold lost: " + owner + " token " + token);
                }
            }

            @Override
            public void lockInterruptibly() {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean tryLock() {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean tryLock(long time, TimeUnit unit) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Condition newCondition() {
                throw new UnsupportedOperationException();
            }
        }
    }
}
