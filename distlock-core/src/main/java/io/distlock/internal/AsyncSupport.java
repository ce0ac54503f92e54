package io.distlock.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Where a client's asynchronous waits run: the executor their steps, releases and completions run on (the one the
 * configuration names, or the client's own pool of at most {@link #defaultThreads()} daemon threads
 * "distlock-async-&lt;clientId&gt;-n" that end when idle), the timer thread their deadlines and retries are scheduled on,
 * and the waits in progress, which the client's close completes exceptionally.
 */
final class AsyncSupport {
    final Executor executor;
    final ScheduledExecutorService timers;
    private final @Nullable ThreadPoolExecutor own;
    private final WaiterLimit limit;
    private final Set<AsyncWait<?>> live = ConcurrentHashMap.newKeySet();

    AsyncSupport(@Nullable Executor configured, ScheduledExecutorService timers, WaiterLimit limit, String clientId) {
        this.timers = timers;
        this.limit = limit;
        if (configured != null) {
            this.executor = configured;
            this.own = null;
        } else {
            int n = defaultThreads();
            AtomicInteger count = new AtomicInteger();
            ThreadPoolExecutor pool =
                    new ThreadPoolExecutor(n, n, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                        Thread t = new Thread(r, "distlock-async-" + clientId + "-" + count.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    });
            pool.allowCoreThreadTimeOut(true);
            this.executor = pool;
            this.own = pool;
        }
    }

    /** The size of the client's own pool: twice the processors, at least 16; each thread makes one round trip at once. */
    static int defaultThreads() {
        return Math.max(16, 2 * Runtime.getRuntime().availableProcessors());
    }

    /**
     * Starts the wait {@code make} makes, counted in the client's waiter limit when it may wait ({@code waitNanos} >
     * 0; {@code what} names it if refused); {@code make} gets what ends the count. A wait refused or not started is a
     * future failed with the reason.
     */
    <T> CompletableFuture<T> start(long waitNanos, Supplier<String> what, Function<Runnable, AsyncWait<T>> make) {
        Runnable onEnd = AsyncSupport::nothing;
        try {
            if (waitNanos > 0) {
                limit.enter(what);
                onEnd = limit::exit;
            }
            return make.apply(onEnd).start();
        } catch (RuntimeException e) {
            onEnd.run();
            return CompletableFuture.failedFuture(e);
        }
    }

    private static void nothing() {}

    void started(AsyncWait<?> w) {
        live.add(w);
    }

    void ended(AsyncWait<?> w) {
        live.remove(w);
    }

    /** Runs {@code action} on the executor; the future completes there with its outcome. */
    CompletableFuture<Void> run(Runnable action) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Runnable task = () -> {
            try {
                action.run();
                f.complete(null);
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
            }
        };
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(e);
        }
        return f;
    }

    /** The client closes: every wait in progress completes with {@code closed} and cleans up; the own pool ends. */
    void close(RuntimeException closed) {
        List<AsyncWait<?>> waits = new ArrayList<>(live);
        for (AsyncWait<?> w : waits) {
            w.closing(closed);
        }
        ThreadPoolExecutor pool = own;
        if (pool != null) {
            pool.shutdown(); // the clean-up steps already queued still run
        }
    }
}
