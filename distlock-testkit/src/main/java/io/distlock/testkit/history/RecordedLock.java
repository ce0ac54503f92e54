package io.distlock.testkit.history;

import io.distlock.DistributedLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.testkit.history.ClientEvent.Op;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DistributedLock} (or a semaphore's permits, {@link #ofPermits}) whose {@link LockHold} acquisitions are recorded in a history: the acquire's invoke and
 * outcome, every {@link RecordedHold#check() validity check}, the release and the loss the library reports.
 *
 * <p>Outcomes: an acquire that returned a hold is {@code ok}; one that returned empty (busy for the whole wait) or was
 * interrupted (the contract says nothing is left behind) is {@code fail}; one that threw anything else is {@code
 * info}, since the store may have granted it.
 */
public final class RecordedLock {
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final String name;
    private final Acquirer acquirer;
    private final HistoryWriter history;
    // kept after release: a loss can be reported while the release is on its way
    private final Map<Long, RecordedHold> byToken = new ConcurrentHashMap<>();

    /** Records the holds taken through {@code lock} into {@code history}. */
    public RecordedLock(DistributedLock lock, HistoryWriter history) {
        this(
                Objects.requireNonNull(lock, "lock").name(),
                (wait, lease) -> lease == null ? lock.tryAcquire(wait) : lock.tryAcquire(wait, lease),
                lock::addListener,
                history);
    }

    /**
     * Records the holds of {@code permits} permits of {@code semaphore} into {@code history}. With as many permits as
     * the semaphore has, its holds are exclusive and the checker's S1 applies to them as to a lock's.
     */
    public static RecordedLock ofPermits(DistributedSemaphore semaphore, int permits, HistoryWriter history) {
        Objects.requireNonNull(semaphore, "semaphore");
        return new RecordedLock(
                semaphore.name(),
                (wait, lease) -> (lease == null
                                ? semaphore.tryAcquire(permits, wait)
                                : semaphore.tryAcquire(permits, wait, lease))
                        .map(LockHold.class::cast),
                semaphore::addListener,
                history);
    }

    private RecordedLock(String name, Acquirer acquirer, Consumer<LockListener> listeners, HistoryWriter history) {
        this.name = name;
        this.acquirer = acquirer;
        this.history = Objects.requireNonNull(history, "history");
        listeners.accept(new LockListener() {
            @Override
            public void lost(String name, long fencingToken, @Nullable Throwable cause) {
                RecordedHold h = byToken.get(fencingToken);
                history.client(
                        RecordedLock.this.name,
                        h == null ? "?" : h.acq(),
                        history.nextOp(),
                        Op.LOST,
                        ClientEvent.Type.OK,
                        fencingToken,
                        null,
                        cause == null ? null : cause.toString());
            }
        });
    }

    public String name() {
        return name;
    }

    public HistoryWriter history() {
        return history;
    }

    /** {@link DistributedLock#tryAcquire(Duration)}, recorded. */
    public Optional<RecordedHold> tryAcquire(Duration wait) throws InterruptedException {
        return record(() -> acquirer.acquire(wait, null));
    }

    /** {@link DistributedLock#tryAcquire(Duration, Duration)}, recorded. */
    public Optional<RecordedHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        return record(() -> acquirer.acquire(wait, lease));
    }

    private interface Attempt {
        Optional<LockHold> run() throws InterruptedException;
    }

    /** Takes a hold, waiting up to {@code wait}, with the lease given or (null) the client's. */
    private interface Acquirer {
        Optional<LockHold> acquire(Duration wait, @Nullable Duration lease) throws InterruptedException;
    }

    private Optional<RecordedHold> record(Attempt attempt) throws InterruptedException {
        String acq = history.process() + "-" + SEQUENCE.incrementAndGet();
        long op = history.nextOp();
        history.client(name, acq, op, Op.ACQUIRE, ClientEvent.Type.INVOKE, null, null, null);
        Optional<LockHold> hold;
        try {
            hold = attempt.run();
        } catch (InterruptedException e) {
            history.client(name, acq, op, Op.ACQUIRE, ClientEvent.Type.FAIL, null, null, "interrupted");
            throw e;
        } catch (RuntimeException e) {
            history.client(name, acq, op, Op.ACQUIRE, ClientEvent.Type.INFO, null, null, e.toString());
            throw e;
        }
        if (hold.isEmpty()) {
            history.client(name, acq, op, Op.ACQUIRE, ClientEvent.Type.FAIL, null, null, "busy");
            return Optional.empty();
        }
        LockHold h = hold.get();
        RecordedHold recorded = new RecordedHold(this, h, acq);
        byToken.put(h.fencingToken(), recorded);
        history.client(name, acq, op, Op.ACQUIRE, ClientEvent.Type.OK, h.fencingToken(), null, null);
        return Optional.of(recorded);
    }
}
