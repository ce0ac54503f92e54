package io.distlock.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.PermitHold;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.InMemoryLockClient;
import io.distlock.testkit.InMemoryLockServer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The Reactor adapters over the reference backend. */
class ReactiveLocksTest {
    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final LockClient a = InMemoryLockClient.builder().server(server).build();
    private final LockClient b = InMemoryLockClient.builder()
            .server(server)
            .leaseTime(Duration.ofMillis(900))
            .build();
    private final String name = "reactor-" + UUID.randomUUID();

    @AfterEach
    void close() {
        a.close();
        b.close();
        server.close();
    }

    @Test
    void acquire_givesAHold_release_freesIt() {
        LockHold h = Objects.requireNonNull(ReactiveLocks.acquire(a.lock(name)).block(Duration.ofSeconds(10)));
        assertThat(h.isValid()).isTrue();
        assertThat(b.lock(name).tryLock()).isFalse();
        ReactiveLocks.release(h).block(Duration.ofSeconds(10));
        assertThat(server.residue(name)).isEmpty();
    }

    @Test
    void tryAcquire_timesOut_empty_leavesNothing() throws Exception {
        LockHold held = a.lock(name).acquire();
        assertThat(ReactiveLocks.tryAcquire(b.lock(name), Duration.ofMillis(200))
                        .blockOptional(Duration.ofSeconds(10)))
                .isEmpty();
        held.release();
        assertThat(server.residue(name)).isEmpty();
    }

    @Test
    void withLock_runsTheWork_andReleasesOnComplete_error_andCancel() throws Exception {
        DistributedLock lock = a.lock(name);
        List<Long> tokens = ReactiveLocks.withLock(lock, h -> Flux.just(h.fencingToken(), h.fencingToken()))
                .collectList()
                .block(Duration.ofSeconds(10));
        assertThat(tokens).hasSize(2);
        assertThat(server.residue(name)).isEmpty();

        assertThatThrownBy(() -> ReactiveLocks.withLockMono(lock, h -> Mono.error(new IllegalStateException("boom")))
                        .block(Duration.ofSeconds(10)))
                .hasMessageContaining("boom");
        Eventually.within(Duration.ofSeconds(5), "released after the error", () -> server.residue(name)
                .isEmpty());

        AtomicBoolean started = new AtomicBoolean();
        Disposable running = ReactiveLocks.withLock(
                        lock, h -> Flux.interval(Duration.ofMillis(20)).doOnSubscribe(s -> started.set(true)))
                .subscribe();
        Eventually.within(Duration.ofSeconds(5), "work started", started::get);
        assertThat(server.residue(name)).isNotEmpty();
        running.dispose();
        Eventually.within(Duration.ofSeconds(5), "released after the cancel", () -> server.residue(name)
                .isEmpty());
    }

    @Test
    void cancelWhileWaiting_leavesNothing() throws Exception {
        LockHold held = a.lock(name).acquire();
        Disposable waiting = ReactiveLocks.acquire(b.fairLock(name)).subscribe();
        Thread.sleep(200);
        waiting.dispose();
        held.release();
        Eventually.within(Duration.ofSeconds(5), "nothing left: " + server.residue(name), () -> server.residue(name)
                .isEmpty());
        assertThat(a.lock(name).tryLock()).isTrue();
    }

    @Test
    void lossOfTheHold_failsTheGuardedPipeline() {
        Flux<Long> guarded = ReactiveLocks.withLock(b.lock(name), h -> Flux.interval(Duration.ofMillis(50)));
        Mono<Void> expire = Mono.delay(Duration.ofMillis(300))
                .doOnNext(t -> server.expireHold(name))
                .then();
        assertThatThrownBy(() -> Flux.merge(guarded, expire.thenMany(Flux.never()))
                        .then()
                        .block(Duration.ofSeconds(20)))
                .isInstanceOf(LockLostException.class);
    }

    @Test
    void withPermits_holdsThePermits_untilTheWorkEnds() {
        Integer permits = ReactiveLocks.withPermitsMono(
                        a.semaphore(name, 3), 2, (PermitHold h) -> Mono.just(h.permits()))
                .block(Duration.ofSeconds(10));
        assertThat(permits).isEqualTo(2);
        assertThat(a.semaphore(name, 3).availablePermits()).isEqualTo(3);
    }
}
