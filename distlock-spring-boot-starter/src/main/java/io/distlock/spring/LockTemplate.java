package io.distlock.spring;

import io.distlock.LockClient;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * Runs code under a distributed lock, for code that cannot use {@link DistributedLock}; the annotation runs through
 * the same steps.
 *
 * <pre>{@code
 * long rows = lockTemplate.execute(LockRequest.of("stats:" + day).waitTime(Duration.ofSeconds(5)),
 *         token -> statsDao.recompute(day, token));
 * }</pre>
 *
 * <h2>Acquire</h2>
 *
 * <p>Each call takes a fresh view of the name from the {@link LockClient} ({@code lock}, {@code fairLock}, or a side
 * of {@code readWriteLock}) and acquires it for the calling thread: {@code lockInterruptibly} when there is no wait
 * limit, {@code tryLock(wait[, lease])} otherwise. A thread that already holds the lock re-enters it without a round
 * trip; re-entries are neither observed nor listed. A wait that runs out throws {@link LockNotAcquiredException}; an
 * interrupt does too, with the interrupt flag set again.
 *
 * <h2>Release</h2>
 *
 * <p>When a Spring transaction synchronization is active on the thread (a {@code @Transactional} method around the
 * call) and the template is transaction-aware, the release is registered to run after the transaction completes,
 * commit or rollback; otherwise the lock is released when the work returns or throws. A release that finds the hold
 * lost throws {@link LockLostException} to the caller (after completion, where nobody can catch it, it is logged as
 * an error).
 *
 * <h2>Observations</h2>
 *
 * <p>Every fresh acquisition is an observation {@code distlock.acquire} (the wait, with an {@code outcome} of {@code
 * acquired}, {@code timed_out} or {@code failed}) and, once acquired, {@code distlock.hold} (from acquisition to
 * release, with an event {@code lost} when the client finds the hold lost). Both carry {@code backend} and {@code kind}
 * tags, and a {@code name} tag only through a {@link LockNameTag}; the lock name itself is a high-cardinality value,
 * seen by tracing only.
 */
public final class LockTemplate {
    private static final Logger log = LoggerFactory.getLogger(LockTemplate.class);
    private static final boolean TX_PRESENT = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            LockTemplate.class.getClassLoader());

    /** Work run under the lock; receives the hold's fencing token. */
    @FunctionalInterface
    public interface LockCallback<T> {
        T doInLock(long fencingToken);
    }

    /** Work without a result run under the lock; receives the hold's fencing token. */
    @FunctionalInterface
    public interface LockAction {
        void run(long fencingToken);
    }

    private final LockClient client;
    private final String backend;
    private final ObservationRegistry observations;
    private final HeldLocks held;
    private final @Nullable LockNameTag nameTag;
    private final boolean transactionAware;

    /**
     * @param client where the locks are
     * @param backend the {@code backend} tag of the observations
     * @param observations where observations go ({@link ObservationRegistry#NOOP} for none)
     * @param held the registry of this instance's holds
     * @param nameTag maps names to a bounded {@code name} tag, or null for no name tag
     * @param transactionAware whether a release inside a transaction waits for its completion
     */
    public LockTemplate(
            LockClient client,
            String backend,
            ObservationRegistry observations,
            HeldLocks held,
            @Nullable LockNameTag nameTag,
            boolean transactionAware) {
        this.client = Objects.requireNonNull(client, "client");
        this.backend = Objects.requireNonNull(backend, "backend");
        this.observations = Objects.requireNonNull(observations, "observations");
        this.held = Objects.requireNonNull(held, "held");
        this.nameTag = nameTag;
        this.transactionAware = transactionAware;
    }

    /**
     * Runs {@code work} while holding the lock, and returns its result.
     *
     * @throws LockNotAcquiredException if the lock was not acquired within the wait time, or the wait was interrupted
     * @throws LockLostException if the hold was found lost when released
     * @throws io.distlock.DistributedLockException if the store failed
     */
    public <T> T execute(LockRequest request, LockCallback<T> work) {
        Objects.requireNonNull(work, "work");
        Hold hold = acquire(request);
        if (hold == null) {
            throw new LockNotAcquiredException(request.name(), request.waitTime(), null);
        }
        T result;
        try {
            result = work.doInLock(hold.token);
        } catch (RuntimeException | Error e) {
            releaseAfterFailure(hold, e);
            throw e;
        }
        release(hold);
        return result;
    }

    /** {@link #execute(LockRequest, LockCallback)} for work without a result. */
    public void run(LockRequest request, LockAction work) {
        Objects.requireNonNull(work, "work");
        execute(request, token -> {
            work.run(token);
            return Boolean.TRUE;
        });
    }

    /** {@link #execute(LockRequest, LockCallback)} on the lock of this name, waiting as long as it takes. */
    public <T> T execute(String name, LockCallback<T> work) {
        return execute(LockRequest.of(name), work);
    }

    /** The client the template locks on. */
    public LockClient client() {
        return client;
    }

    /** The backend name, as in the {@code backend} tag. */
    public String backend() {
        return backend;
    }

    /** One acquired hold of the calling thread. */
    static final class Hold {
        final io.distlock.DistributedLock lock;
        final long token;
        final @Nullable Observation observation;
        final HeldLocks.@Nullable Entry entry;
        final @Nullable LossListener listener;

        Hold(
                io.distlock.DistributedLock lock,
                long token,
                @Nullable Observation observation,
                HeldLocks.@Nullable Entry entry,
                @Nullable LossListener listener) {
            this.lock = lock;
            this.token = token;
            this.observation = observation;
            this.entry = entry;
            this.listener = listener;
        }
    }

    /** Marks the hold lost and tells its observation; registered on the fresh view before the acquisition. */
    static final class LossListener implements LockListener {
        volatile @Nullable Observation observation;
        volatile HeldLocks.@Nullable Entry entry;
        volatile long token = Long.MIN_VALUE;

        @Override
        public void lost(String name, long fencingToken, @Nullable Throwable cause) {
            if (fencingToken != token) {
                return;
            }
            // the event first: whoever sees the entry lost also finds the lost-holds counter counted
            Observation o = observation;
            if (o != null) {
                o.event(Observation.Event.of("lost", "the client found the hold lost"));
            }
            HeldLocks.Entry e = entry;
            if (e != null) {
                e.lost = true;
            }
            log.warn(
                    "distlock: hold of '{}' (token {}) was lost; guarded work may overlap another owner's",
                    name,
                    fencingToken,
                    cause);
        }
    }

    /**
     * Acquires the lock for the calling thread.
     *
     * @return the hold, or null if the wait ran out
     * @throws LockNotAcquiredException if interrupted while waiting
     */
    @Nullable
    Hold acquire(LockRequest request) {
        Objects.requireNonNull(request, "request");
        io.distlock.DistributedLock lock =
                switch (request.kind()) {
                    case LOCK -> client.lock(request.name());
                    case FAIR -> client.fairLock(request.name());
                    case READ -> client.readWriteLock(request.name()).readLock();
                    case WRITE -> client.readWriteLock(request.name()).writeLock();
                };
        if (lock.getHoldCount() > 0) {
            // re-entry: the outer acquisition observes and lists the hold; it never waits
            try {
                acquireOnce(lock, request);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockNotAcquiredException(request.name(), request.waitTime(), e);
            }
            return new Hold(lock, lock.fencingToken(), null, null, null);
        }
        String kind = request.kind().name().toLowerCase(Locale.ROOT);
        KeyValues tags = KeyValues.of("backend", backend, "kind", kind);
        if (nameTag != null) {
            tags = tags.and("name", nameTag.tag(request.name()));
        }
        Observation wait = Observation.createNotStarted("distlock.acquire", observations)
                .contextualName("distlock acquire")
                .lowCardinalityKeyValues(tags)
                .highCardinalityKeyValue("distlock.name", request.name())
                .start();
        LossListener listener = new LossListener();
        lock.addListener(listener);
        boolean acquired;
        try {
            acquired = acquireOnce(lock, request);
        } catch (InterruptedException e) {
            lock.removeListener(listener);
            Thread.currentThread().interrupt();
            wait.lowCardinalityKeyValue("outcome", "failed").error(e).stop();
            throw new LockNotAcquiredException(request.name(), request.waitTime(), e);
        } catch (RuntimeException | Error e) {
            lock.removeListener(listener);
            wait.lowCardinalityKeyValue("outcome", "failed").error(e).stop();
            throw e;
        }
        if (!acquired) {
            lock.removeListener(listener);
            wait.lowCardinalityKeyValue("outcome", "timed_out").stop();
            return null;
        }
        wait.lowCardinalityKeyValue("outcome", "acquired").stop();
        long token = lock.fencingToken();
        Observation holdObservation = Observation.createNotStarted("distlock.hold", observations)
                .contextualName("distlock hold")
                .lowCardinalityKeyValues(tags)
                .highCardinalityKeyValue("distlock.name", request.name())
                .highCardinalityKeyValue("distlock.token", Long.toString(token))
                .start();
        HeldLocks.Entry entry = held.add(request.name(), request.kind(), token, request.leaseTime());
        listener.observation = holdObservation;
        listener.entry = entry;
        listener.token = token;
        return new Hold(lock, token, holdObservation, entry, listener);
    }

    private static boolean acquireOnce(io.distlock.DistributedLock lock, LockRequest request)
            throws InterruptedException {
        Duration wait = request.waitTime();
        Duration lease = request.leaseTime();
        if (wait == null) {
            if (lease == null) {
                lock.lockInterruptibly();
            } else {
                // no interruptible form with a lease and no limit: lock(lease) sets the flag again if interrupted
                lock.lock(lease.toNanos(), TimeUnit.NANOSECONDS);
            }
            return true;
        }
        return lease == null
                ? lock.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS)
                : lock.tryLock(wait.toNanos(), lease.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Releases the hold now, or after the thread's transaction completes.
     *
     * @throws LockLostException if released now and the hold was lost
     */
    void release(Hold hold) {
        if (transactionAware && TX_PRESENT && TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationManager.registerSynchronization(new ReleaseAfterCompletion(this, hold));
            return;
        }
        releaseNow(hold);
    }

    /** Releases after the work threw {@code failure}; a failure of the release is added to it as suppressed. */
    void releaseAfterFailure(Hold hold, Throwable failure) {
        try {
            release(hold);
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    void releaseNow(Hold hold) {
        try {
            hold.lock.unlock();
        } catch (RuntimeException e) {
            Observation o = hold.observation;
            if (o != null && !(e instanceof LockLostException)) {
                o.error(e);
            }
            throw e;
        } finally {
            LossListener listener = hold.listener;
            if (listener != null) {
                hold.lock.removeListener(listener);
            }
            HeldLocks.Entry entry = hold.entry;
            if (entry != null) {
                held.remove(entry);
            }
            Observation o = hold.observation;
            if (o != null) {
                o.stop();
            }
        }
    }

    /** The release registered with a transaction: runs on the completing thread, after commit or rollback. */
    private static final class ReleaseAfterCompletion implements TransactionSynchronization {
        private final LockTemplate template;
        private final Hold hold;

        ReleaseAfterCompletion(LockTemplate template, Hold hold) {
            this.template = template;
            this.hold = hold;
        }

        @Override
        public void afterCompletion(int status) {
            try {
                template.releaseNow(hold);
            } catch (LockLostException e) {
                log.error(
                        "distlock: hold of '{}' (token {}) was lost before its transaction completed ({}); the"
                                + " transaction's work may overlap another owner's",
                        hold.lock.name(),
                        hold.token,
                        status == STATUS_COMMITTED ? "committed" : "not committed",
                        e);
            } catch (RuntimeException e) {
                log.error(
                        "distlock: releasing '{}' after its transaction failed; the hold expires with its lease",
                        hold.lock.name(),
                        e);
            }
        }
    }
}
