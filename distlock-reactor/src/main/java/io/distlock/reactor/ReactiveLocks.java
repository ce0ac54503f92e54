package io.distlock.reactor;

import io.distlock.DistributedLock;
import io.distlock.DistributedSemaphore;
import io.distlock.LockHold;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.distlock.PermitHold;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/*
 * Overview
 *
 * Acquisition
 *   Each Mono wraps one future of the core's asynchronous acquisition, made when it is subscribed to; cancelling the
 *   subscription cancels the future, which leaves nothing behind in the store (a grant that raced the cancel is
 *   released by the core). A hold that reaches a cancelled subscriber anyway is discarded through Reactor's discard
 *   hook, which releases it.
 *
 * Guarded pipelines
 *   withLock/withPermits are Flux.usingWhen: the hold is the resource, released (releaseAsync) when the guarded
 *   pipeline completes, fails or is cancelled. The pipeline runs until the hold's loss: a listener on the lock or
 *   semaphore turns the loss of this hold (matched by name and fencing token) into a LockLostException signal that
 *   cancels the work and ends the pipeline with that error.
 */
/**
 * Reactor adapters of distlock's asynchronous acquisition: {@code Mono}s of holds, and helpers that run a {@code Mono}
 * or {@code Flux} under a lock or permits. Each subscription acquires anew; cancelling it ends the wait and leaves
 * nothing behind.
 *
 * <pre>{@code
 * Flux<Row> rows = ReactiveLocks.withLock(client.lock("report:42"), hold -> repository.export(hold.fencingToken()));
 * }</pre>
 */
public final class ReactiveLocks {
    private ReactiveLocks() {}

    /** Acquires {@code lock} on subscription, waiting as long as it takes; see {@link DistributedLock#acquireAsync()}. */
    public static Mono<LockHold> acquire(DistributedLock lock) {
        Objects.requireNonNull(lock, "lock");
        return Mono.fromFuture(lock::acquireAsync, false).doOnDiscard(LockHold.class, ReactiveLocks::releaseQuietly);
    }

    /** Acquires {@code lock} on subscription waiting at most {@code wait}; empty when the wait runs out. */
    public static Mono<LockHold> tryAcquire(DistributedLock lock, Duration wait) {
        Objects.requireNonNull(lock, "lock");
        Objects.requireNonNull(wait, "wait");
        return Mono.fromFuture(() -> lock.tryAcquireAsync(wait), false)
                .flatMap(Mono::justOrEmpty)
                .doOnDiscard(LockHold.class, ReactiveLocks::releaseQuietly);
    }

    /** Acquires {@code permits} of {@code semaphore} on subscription, waiting as long as it takes. */
    public static Mono<PermitHold> acquire(DistributedSemaphore semaphore, int permits) {
        Objects.requireNonNull(semaphore, "semaphore");
        return Mono.fromFuture(() -> semaphore.acquireAsync(permits), false)
                .doOnDiscard(LockHold.class, ReactiveLocks::releaseQuietly);
    }

    /** Acquires {@code permits} of {@code semaphore} on subscription waiting at most {@code wait}; empty if it ran out. */
    public static Mono<PermitHold> tryAcquire(DistributedSemaphore semaphore, int permits, Duration wait) {
        Objects.requireNonNull(semaphore, "semaphore");
        Objects.requireNonNull(wait, "wait");
        return Mono.fromFuture(() -> semaphore.tryAcquireAsync(permits, wait), false)
                .flatMap(Mono::justOrEmpty)
                .doOnDiscard(LockHold.class, ReactiveLocks::releaseQuietly);
    }

    /** Releases {@code hold} on subscription; fails with what {@link LockHold#release()} would throw. */
    public static Mono<Void> release(LockHold hold) {
        Objects.requireNonNull(hold, "hold");
        return Mono.fromFuture(hold::releaseAsync, true);
    }

    /**
     * Runs {@code work} while holding {@code lock}: acquires on subscription, then subscribes to the pipeline {@code
     * work} makes of the hold, and releases the hold when it completes, fails or is cancelled. If the hold is lost
     * meanwhile, the work is cancelled and the pipeline fails with {@link LockLostException}.
     */
    public static <T> Flux<T> withLock(DistributedLock lock, Function<? super LockHold, ? extends Publisher<T>> work) {
        Objects.requireNonNull(work, "work");
        return guarded(acquire(lock), lock::addListener, lock::removeListener, work);
    }

    /** As {@link #withLock}, for a {@code Mono}: it completes after the hold's release. */
    public static <T> Mono<T> withLockMono(DistributedLock lock, Function<? super LockHold, ? extends Mono<T>> work) {
        Objects.requireNonNull(work, "work");
        return guardedMono(acquire(lock), lock::addListener, lock::removeListener, work);
    }

    /** As {@link #withLock}, holding {@code permits} of {@code semaphore}. */
    public static <T> Flux<T> withPermits(
            DistributedSemaphore semaphore, int permits, Function<? super PermitHold, ? extends Publisher<T>> work) {
        Objects.requireNonNull(work, "work");
        return guarded(acquire(semaphore, permits), semaphore::addListener, semaphore::removeListener, work);
    }

    /** As {@link #withPermits}, for a {@code Mono}: it completes after the hold's release. */
    public static <T> Mono<T> withPermitsMono(
            DistributedSemaphore semaphore, int permits, Function<? super PermitHold, ? extends Mono<T>> work) {
        Objects.requireNonNull(work, "work");
        return guardedMono(acquire(semaphore, permits), semaphore::addListener, semaphore::removeListener, work);
    }

    private static <H extends LockHold, T> Mono<T> guardedMono(
            Mono<H> acquire,
            Consumer<LockListener> add,
            Consumer<LockListener> remove,
            Function<? super H, ? extends Mono<T>> work) {
        return Mono.usingWhen(
                acquire,
                hold -> work.apply(hold).takeUntilOther(lossOf(hold, add, remove)),
                ReactiveLocks::releaseAfterWork,
                (hold, error) -> releaseQuietlyAfter(hold),
                ReactiveLocks::releaseQuietlyAfter);
    }

    private static <H extends LockHold, T> Flux<T> guarded(
            Mono<H> acquire,
            Consumer<LockListener> add,
            Consumer<LockListener> remove,
            Function<? super H, ? extends Publisher<T>> work) {
        return Flux.usingWhen(
                acquire,
                hold -> Flux.from(work.apply(hold)).takeUntilOther(lossOf(hold, add, remove)),
                ReactiveLocks::releaseAfterWork,
                (hold, error) -> releaseQuietlyAfter(hold),
                ReactiveLocks::releaseQuietlyAfter);
    }

    /** A signal that fails with {@link LockLostException} when {@code hold} is lost, and never emits otherwise. */
    private static Mono<Void> lossOf(LockHold hold, Consumer<LockListener> add, Consumer<LockListener> remove) {
        return Mono.create(sink -> {
            LockListener listener = new LockListener() {
                @Override
                public void lost(String name, long fencingToken, @Nullable Throwable cause) {
                    if (name.equals(hold.name()) && fencingToken == hold.fencingToken()) {
                        LockLostException e = new LockLostException(
                                "'" + name + "' (fencing token " + fencingToken + ") was lost while guarding work");
                        if (cause != null) {
                            e.initCause(cause);
                        }
                        sink.error(e);
                    }
                }
            };
            add.accept(listener);
            sink.onDispose(() -> remove.accept(listener));
            if (!hold.isValid()) {
                sink.error(new LockLostException(
                        "'" + hold.name() + "' (fencing token " + hold.fencingToken() + ") was lost before the work"));
            }
        });
    }

    /** Releases the hold after the work completed: a loss found by the release fails the pipeline. */
    private static Mono<Void> releaseAfterWork(LockHold hold) {
        return Mono.fromFuture(hold::releaseAsync, true);
    }

    /** Releases the hold after an error or a cancel; a loss is not news then (it may be the error itself). */
    private static Mono<Void> releaseQuietlyAfter(LockHold hold) {
        return Mono.fromFuture(hold::releaseAsync, true).onErrorResume(LockLostException.class, e -> Mono.empty());
    }

    private static void releaseQuietly(LockHold hold) {
        var unused = hold.releaseAsync();
    }
}
