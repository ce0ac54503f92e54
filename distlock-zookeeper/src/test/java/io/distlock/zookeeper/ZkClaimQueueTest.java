package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.spi.Claim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.Mode;
import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** The grant rules and the watched entries of read-write lock and semaphore queues, without a server. */
class ZkClaimQueueTest {
    private static final Lease LEASE = Lease.renewed(Duration.ofSeconds(30));
    private int sequence;

    private String node(Claim.Kind kind, Mode mode, int size, int permits, String owner, boolean downgrade) {
        Claim c = Claim.of(new LockKey("n"), kind, mode, permits, size, new OwnerId(owner), LEASE);
        return ZkClaimQueue.entryPrefix(c, downgrade) + String.format("%010d", sequence++);
    }

    private String read(String owner) {
        return node(Claim.Kind.READ_WRITE_LOCK, Mode.SHARED, Integer.MAX_VALUE, 1, owner, false);
    }

    private String write(String owner) {
        return node(Claim.Kind.READ_WRITE_LOCK, Mode.EXCLUSIVE, Integer.MAX_VALUE, 1, owner, false);
    }

    private String permits(int size, int permits, String owner) {
        return node(Claim.Kind.SEMAPHORE, Mode.SHARED, size, permits, owner, false);
    }

    private static List<Boolean> grants(List<String> nodes) {
        List<ZkClaimQueue.Entry> q = ZkClaimQueue.queue(nodes);
        List<Boolean> out = new ArrayList<>();
        for (ZkClaimQueue.Entry e : q) {
            out.add(ZkClaimQueue.holds(q, e));
        }
        return out;
    }

    private static List<String> watch(List<String> nodes, String own) {
        List<ZkClaimQueue.Entry> q = ZkClaimQueue.queue(nodes);
        ZkClaimQueue.Entry self = Objects.requireNonNull(ZkClaimQueue.parse(own), own);
        return ZkClaimQueue.verdict(q, self).watch();
    }

    @Test
    void parse_readsHeaderTagAndSequence_alsoBehindTheProtectedPrefix() {
        String plain = permits(5, 2, "client-l-k-:h1");
        ZkClaimQueue.Entry e =
                Objects.requireNonNull(ZkClaimQueue.parse("_c_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-" + plain));
        assertThat(e.kind()).isEqualTo(Claim.Kind.SEMAPHORE);
        assertThat(e.size()).isEqualTo(5);
        assertThat(e.permits()).isEqualTo(2);
        assertThat(e.ownerTag()).isEqualTo(ZkNames.ownerTag("client-l-k-:h1"));
        assertThat(e.sequence()).isZero();
        assertThat(ZkClaimQueue.parse(ZkClaimQueue.LATCH_NODE)).isNull();
        assertThat(ZkClaimQueue.parse("l-owner-0000000001")).as("a lock entry").isNull();
    }

    @Test
    void readers_shareUntilAWriter_laterReadersWaitForIt() {
        String r1 = read("a");
        String r2 = read("b");
        String w = write("c");
        String r3 = read("d");
        List<String> q = List.of(r3, w, r1, r2);
        assertThat(grants(q)).containsExactly(true, true, false, false);
        assertThat(watch(q, w)).as("a writer watches its nearest predecessor").containsExactly(r2);
        assertThat(watch(q, r3)).as("a reader watches the nearest writer").containsExactly(w);
    }

    @Test
    void downgrade_isGrantedBehindAQueuedWriter_andKeepsThatWriterOut() {
        String w = write("a");
        String queuedWriter = write("b");
        String d = node(Claim.Kind.READ_WRITE_LOCK, Mode.SHARED, Integer.MAX_VALUE, 1, "a", true);
        assertThat(grants(List.of(w, queuedWriter, d))).containsExactly(true, false, true);
        assertThat(grants(List.of(queuedWriter, d)))
                .as("the write hold released: the read hold still keeps the writer out")
                .containsExactly(false, true);
        assertThat(watch(List.of(queuedWriter, d), queuedWriter)).containsExactly(d);
    }

    @Test
    void semaphore_grantsInOrderWhileThePermitsAheadFit() {
        String a = permits(4, 2, "a");
        String b = permits(4, 1, "b");
        String c = permits(4, 2, "c");
        String d = permits(4, 1, "d");
        List<String> q = List.of(a, b, c, d);
        assertThat(grants(q)).as("d would fit alone but waits behind c").containsExactly(true, true, false, false);
        assertThat(watch(q, c)).containsExactly(a, b);
        assertThat(grants(List.of(b, c, d))).containsExactly(true, true, true);
    }

    private static long shortfall(List<String> nodes, String own) {
        List<ZkClaimQueue.Entry> q = ZkClaimQueue.queue(nodes);
        ZkClaimQueue.Entry self = Objects.requireNonNull(ZkClaimQueue.parse(own), own);
        return ZkClaimQueue.verdict(q, self).shortfall();
    }

    @Test
    void shortfall_isThePermitsThatMustLeaveAhead_oneForAReadWriteBlocker() {
        String a = permits(4, 2, "a");
        String b = permits(4, 1, "b");
        String c = permits(4, 2, "c");
        String d = permits(4, 3, "d");
        List<String> q = List.of(a, b, c, d);
        assertThat(shortfall(q, c)).as("2 + 1 ahead, 2 asked, 4 in all").isEqualTo(1);
        assertThat(shortfall(q, d)).as("2 + 1 + 2 ahead, 3 asked").isEqualTo(4);
        assertThat(watch(q, d)).containsExactly(a, b, c);
        assertThat(shortfall(List.of(b, c, d), d))
                .as("a left: its 2 permits freed")
                .isEqualTo(2);
        String r = read("r");
        String w = write("w");
        String r2 = read("r2");
        assertThat(shortfall(List.of(r, w, r2), w)).isEqualTo(1);
        assertThat(shortfall(List.of(r, w, r2), r2)).isEqualTo(1);
    }

    @Test
    void otherKindOrSize_isRefusedNamingBoth() {
        List<ZkClaimQueue.Entry> sem = ZkClaimQueue.queue(List.of(permits(3, 1, "a")));
        assertThatThrownBy(() -> ZkClaimQueue.checkKind("n", sem, false, Claim.Kind.SEMAPHORE, 5))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("3")
                .hasMessageContaining("5");
        assertThatThrownBy(() -> ZkClaimQueue.checkKind("n", sem, false, Claim.Kind.READ_WRITE_LOCK, 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("semaphore");
        assertThatThrownBy(() -> ZkClaimQueue.checkKind("n", List.of(), true, Claim.Kind.SEMAPHORE, 5))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("latch");
        ZkClaimQueue.checkKind("n", sem, false, Claim.Kind.SEMAPHORE, 3);
    }
}
