package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.etcd.EtcdClaimQueue.Key;
import io.distlock.spi.Claim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The grant rule of read-write locks and semaphores, over queues written out by hand. */
class EtcdClaimQueueTest {
    private static final int RW = Integer.MAX_VALUE;

    private static ByteSequence k(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static Key write(String key, long rev) {
        return new Key(k(key), rev, rev, Claim.Kind.READ_WRITE_LOCK, true, 1, RW);
    }

    private static Key read(String key, long rev, long place) {
        return new Key(k(key), rev, place, Claim.Kind.READ_WRITE_LOCK, false, 1, RW);
    }

    private static Key permits(String key, long rev, int permits, int size) {
        return new Key(k(key), rev, rev, Claim.Kind.SEMAPHORE, false, permits, size);
    }

    private static Claim claim(Claim.Kind kind, Mode mode, int permits, int size) {
        return Claim.of(
                new LockKey("n"),
                kind,
                mode,
                permits,
                size,
                new OwnerId("c:t1"),
                Lease.renewed(Duration.ofSeconds(30)));
    }

    @Test
    void readers_areGrantedUntilAWriteKeyIsAheadOfThem() {
        Claim r = claim(Claim.Kind.READ_WRITE_LOCK, Mode.SHARED, 1, RW);
        List<Key> q = List.of(read("a", 1, 1), read("b", 2, 2), write("w", 3), read("c", 4, 4));
        assertThat(EtcdClaimQueue.decide(r, q, k("b"), 2, null).granted()).isTrue();
        var behindWriter = EtcdClaimQueue.decide(r, q, k("c"), 4, null);
        assertThat(behindWriter.granted()).isFalse();
        assertThat(behindWriter.blockers()).containsOnlyKeys(3L);
        var writer =
                EtcdClaimQueue.decide(claim(Claim.Kind.READ_WRITE_LOCK, Mode.EXCLUSIVE, 1, RW), q, k("w"), 3, null);
        assertThat(writer.granted()).isFalse();
        assertThat(writer.blockers()).containsOnlyKeys(1L, 2L);
    }

    @Test
    void downgradedReadKey_takesItsWriteKeysPlace_andHoldsBackTheWriterQueuedBehindIt() {
        Claim r = claim(Claim.Kind.READ_WRITE_LOCK, Mode.SHARED, 1, RW);
        Claim w = claim(Claim.Kind.READ_WRITE_LOCK, Mode.EXCLUSIVE, 1, RW);
        List<Key> held = List.of(write("o", 10), write("other", 11), read("o:r", 12, 10));
        assertThat(EtcdClaimQueue.decide(r, held, k("o:r"), 10, k("o")).granted())
                .as("the downgrade is granted at once")
                .isTrue();
        List<Key> afterWriteRelease = List.of(write("other", 11), read("o:r", 12, 10));
        var next = EtcdClaimQueue.decide(w, afterWriteRelease, k("other"), 11, null);
        assertThat(next.granted())
                .as("the writer behind the released write lock")
                .isFalse();
        assertThat(next.blockers()).containsOnlyKeys(12L);
        assertThat(EtcdClaimQueue.granted(Claim.Kind.READ_WRITE_LOCK, RW, held))
                .extracting(Key::revision)
                .containsExactly(10L, 12L);
    }

    @Test
    void semaphore_grantsWhileThePermitsAheadFit_andAWaitingLargeClaimHoldsBackSmallOnes() {
        List<Key> q = List.of(permits("a", 1, 2, 4), permits("b", 2, 3, 4), permits("c", 3, 1, 4));
        assertThat(EtcdClaimQueue.decide(claim(Claim.Kind.SEMAPHORE, Mode.SHARED, 2, 4), q, k("a"), 1, null)
                        .granted())
                .isTrue();
        var large = EtcdClaimQueue.decide(claim(Claim.Kind.SEMAPHORE, Mode.SHARED, 3, 4), q, k("b"), 2, null);
        assertThat(large.granted()).isFalse();
        assertThat(large.budget()).isEqualTo(1);
        var small = EtcdClaimQueue.decide(claim(Claim.Kind.SEMAPHORE, Mode.SHARED, 1, 4), q, k("c"), 3, null);
        assertThat(small.granted())
                .as("1 permit would fit, but the waiting 3 are ahead")
                .isFalse();
        assertThat(EtcdClaimQueue.available("n", Claim.Kind.SEMAPHORE, 4, q)).isEqualTo(2);
    }

    @Test
    void otherSizeOrKind_isRefusedNamingBoth() {
        List<Key> q = List.of(permits("a", 1, 1, 3));
        assertThatThrownBy(
                        () -> EtcdClaimQueue.decide(claim(Claim.Kind.SEMAPHORE, Mode.SHARED, 1, 5), q, k("b"), 2, null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("3")
                .hasMessageContaining("5");
        assertThatThrownBy(() -> EtcdClaimQueue.decide(
                        claim(Claim.Kind.READ_WRITE_LOCK, Mode.SHARED, 1, RW), q, k("b"), 2, null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("semaphore");
        Key lock = new Key(k("l"), 5, 5, Claim.Kind.LOCK, true, 1, 1);
        assertThatThrownBy(() -> EtcdClaimQueue.decide(
                        claim(Claim.Kind.READ_WRITE_LOCK, Mode.SHARED, 1, RW),
                        List.of(write("o", 4), lock, read("o:r", 6, 4)),
                        k("o:r"),
                        4,
                        k("o")))
                .as("a lock's key behind a downgrade")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lock");
    }
}
