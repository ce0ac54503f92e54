package io.distlock.testkit.history;

import io.distlock.DistributedLock;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.testkit.history.ClientEvent.Op;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DistributedLock} whose {@link LockHold} acquisitions are recorded in a history: the acquire's invoke and
 * outcome, every {@link RecordedHold#check() validity check}, the release and the loss the library reports.
 *
 * <p>Outcomes: an acquire that returned a hold is {@code ok}; one that returned empty (busy for the whole wait) or was
 * interrupted (the contract says nothing is left behind) is {@code fail}; one that threw anything else is {@code
 * info}, since the store may have granted it.
 */
public final class RecordedLock {
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final DistributedLock lock;
    private final HistoryWriter history;
    // kept after release: a loss can be reported while the release is on its way
    private final Map<Long, RecordedHold> byToken = new ConcurrentHashMap<>();

    /** Records the holds taken through {@code lock} into {@code history}. */
    public RecordedLock(DistributedLock lock, HistoryWriter history) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.history = Objects.requireNonNull(history, "history");
        lock.addListener(new LockListener() {
            @Override
            public void lost(String name, long fencingToken, @Nullable Throwable cause) {
                RecordedHold h = byToken.get(fencingToken);
                history.client(
                        lock.name(),
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
        return lock.name();
    }

    public HistoryWriter history() {
        return history;
    }

    /** {@link DistributedLock#tryAcquire(Duration)}, recorded. */
    public Optional<RecordedHold> tryAcquire(Duration wait) throws InterruptedException {
        return record(() -> lock.tryAcquire(wait));
    }

    /** {@link DistributedLock#tryAcquire(Duration, Duration)}, recorded. */
    public Optional<RecordedHold> tryAcquire(Duration wait, Duration lease) throws InterruptedException {
        return record(() -> lock.tryAcquire(wait, lease));
    }

    private interface Attempt {
        Optional<LockHold> run() throws InterruptedException;
    }

    private Optional<RecordedHold> record(Attempt attempt) throws InterruptedException {
        String acq = history.process() + "-" + SEQUENCE.incrementAndGet();
        long op = history.nextOp();
        history.client(lock.name(), acq, op, Op.ACQUIRE, ClientEvent.Type.INVOKE, null, null, null);
        Optional<LockHold> hold;
        try {
            hold = attempt.run();
        } catch (InterruptedException e) {
            history.client(lock.name(), acq, op, Op.ACQUIRE, ClientEvent.Type.FAIL, null, null, "interrupted");
            throw e;
        } catch (RuntimeException e) {
            history.client(lock.name(), acq, op, Op.ACQUIRE, ClientEvent.Type.INFO, null, null, e.toString());
            throw e;
        }
        if (hold.isEmpty()) {
            history.client(lock.name(), acq, op, Op.ACQUIRE, ClientEvent.Type.FAIL, null, null, "busy");
            return Optional.empty();
        }
        LockHold h = hold.get();
        RecordedHold recorded = new RecordedHold(this, h, acq);
        byToken.put(h.fencingToken(), recorded);
        history.client(lock.name(), acq, op, Op.ACQUIRE, ClientEvent.Type.OK, h.fencingToken(), null, null);
        return Optional.of(recorded);
    }
}
