package io.distlock.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockInfo;
import io.distlock.internal.Ticker;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.HandOff;
import io.distlock.spi.HeldClaim;
import io.distlock.spi.Lease;
import io.distlock.spi.LockKey;
import io.distlock.spi.OwnerId;
import io.distlock.spi.Subscription;
import io.distlock.testkit.Eventually;
import io.distlock.testkit.Timing;
import io.distlock.testkit.server.EtcdServer;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The store's own steps against a real etcd: keys, revisions, leases and watches, below the engine. */
class EtcdLockStoreIT {
    private static final String NAMESPACE = "store-it/";
    private static final Duration LEASE = Duration.ofSeconds(30);
    /** A hold the watchdog renews, on the store's shared lease. */
    private static final Lease RENEWED = Lease.renewed(LEASE);

    private static final int SPARE_TOKENS_ASKED = 15;

    @RegisterExtension
    static final EtcdServer etcd = EtcdServer.onFreePort();

    private static EtcdFixture fixture;
    private final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeAll
    static void connect() {
        fixture = new EtcdFixture(etcd.endpoints(), NAMESPACE);
    }

    @AfterAll
    static void disconnect() {
        fixture.close();
    }

    @AfterEach
    void closeOpened() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
    }

    /** A store whose watchdog lease is {@link #LEASE}. */
    private EtcdLockStore store() {
        EtcdLockStore s = new EtcdLockStore(
                Client.builder().endpoints(etcd.endpoints()).build(),
                true,
                NAMESPACE,
                LEASE,
                Duration.ofSeconds(5),
                Ticker.system());
        opened.add(s);
        return s;
    }

    private LockClient client() {
        LockClient c = EtcdLockClient.builder()
                .endpoints(etcd.endpoints())
                .namespace(NAMESPACE)
                .build();
        opened.add(c);
        return c;
    }

    private static LockKey name() {
        return new LockKey("store-" + UUID.randomUUID());
    }

    private static OwnerId owner(String s) {
        return new OwnerId(s);
    }

    /** A lock's claim that asks for spare tokens, as the engine's claims do. */
    private static Claim lock(LockKey key, OwnerId owner, Lease lease) {
        return Claim.lock(key, owner, lease, SPARE_TOKENS_ASKED);
    }

    private static long token(Attempt a) {
        assertThat(a).isInstanceOf(Attempt.Acquired.class);
        assertThat(((Attempt.Acquired) a).spareTokens())
                .as("etcd reserves no spare tokens, whatever the claim asks")
                .isZero();
        return ((Attempt.Acquired) a).fencingToken();
    }

    // ---------------------------------------------------------------- acquire

    @Test
    void tryAcquire_freeLock_tokenIsTheKeysCreateRevision() {
        EtcdLockStore s = store();
        LockKey key = name();
        long token = token(s.tryAcquire(lock(key, owner("c1:t1"), RENEWED), false));
        List<KeyValue> kvs = fixture.keysOf(key.name());
        assertThat(kvs).hasSize(1);
        assertThat(kvs.get(0).getCreateRevision()).isEqualTo(token);
        assertThat(kvs.get(0).getKey().toString(UTF_8)).endsWith("/c1:t1");
        assertThat(kvs.get(0).getValue().toString(UTF_8)).isEqualTo("lease=30000ms owner=c1:t1");
        assertThat(s.release(HeldClaim.lock(key, owner("c1:t1"), token))).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void tryAcquire_busyWithoutQueue_leavesNoKey() {
        EtcdLockStore s = store();
        LockKey key = name();
        var unused = token(s.tryAcquire(lock(key, owner("c1:t1"), RENEWED), false));
        assertThat(s.tryAcquire(lock(key, owner("c1:t2"), RENEWED), false)).isInstanceOf(Attempt.Busy.class);
        assertThat(s.tryAcquire(lock(key, owner("c1:h9"), Lease.fixed(Duration.ofSeconds(3))), false))
                .isInstanceOf(Attempt.Busy.class);
        assertThat(fixture.keysOf(key.name())).hasSize(1);
    }

    @Test
    void tryAcquire_queued_grantsInCreateRevisionOrder() {
        EtcdLockStore a = store();
        EtcdLockStore b = store();
        LockKey key = name();
        long first = token(a.tryAcquire(lock(key, owner("a:t1"), RENEWED), true));
        assertThat(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(a.release(HeldClaim.lock(key, owner("a:t1"), first))).isTrue();
        assertThat(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true))
                .as("second in line")
                .isInstanceOf(Attempt.Busy.class);
        long second = token(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true));
        assertThat(b.release(HeldClaim.lock(key, owner("b:t1"), second))).isTrue();
        long third = token(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true));
        assertThat(first).isLessThan(second);
        assertThat(second).isLessThan(third);
        assertThat(a.release(HeldClaim.lock(key, owner("a:t2"), third))).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void tryAcquire_queuedWaiter_retryWithinAThirdOfItsLease() {
        EtcdLockStore s = store();
        LockKey key = name();
        var unused = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), true));
        Attempt busy = s.tryAcquire(lock(key, owner("c:t2"), Lease.fixed(Duration.ofSeconds(9))), true);
        assertThat(((Attempt.Busy) busy).retryWithin()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void tryAcquire_sameOwnerAfterItsGrantWasGivenUp_getsAGreaterToken() {
        EtcdLockStore s = store();
        LockKey key = name();
        long first = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        // the engine forgot this grant (say its release failed); a new acquisition must not reuse the old key
        long second = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        assertThat(second).isGreaterThan(first);
        assertThat(fixture.keysOf(key.name())).hasSize(1);
    }

    @Test
    void release_byOtherOwner_returnsFalse_changesNothing() {
        EtcdLockStore s = store();
        LockKey key = name();
        long token = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner("c:t2"), token))).isFalse();
        assertThat(store().release(HeldClaim.lock(key, owner("c:t1"), token)))
                .as("the key names its owner, and its create revision the hold: no record of the grant is needed")
                .isTrue();
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), token))).isFalse();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    // ---------------------------------------------------------------- hand-off

    private static long granted(HandOff h) {
        assertThat(h).isInstanceOf(HandOff.Granted.class);
        assertThat(((HandOff.Granted) h).spareTokens())
                .as("etcd reserves no spare tokens, whatever the claim asks")
                .isZero();
        return ((HandOff.Granted) h).fencingToken();
    }

    private static long unaryRequests() {
        String endpoint = etcd.endpoints().split(",")[0];
        return EtcdFixture.handled(endpoint, "Txn")
                + EtcdFixture.handled(endpoint, "Range")
                + EtcdFixture.handled(endpoint, "Put")
                + EtcdFixture.handled(endpoint, "DeleteRange")
                + EtcdFixture.handled(endpoint, "LeaseGrant")
                + EtcdFixture.handled(endpoint, "LeaseRevoke");
    }

    @Test
    void handOff_freeQueue_grantsAGreaterTokenInOneTransaction() throws Exception {
        EtcdLockStore s = store();
        LockKey key = name();
        long first = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        long revision = fixture.revision();
        long requests = unaryRequests();
        long second = granted(s.handOff(lock(key, owner("c:t2"), RENEWED), owner("c:t1")));
        assertThat(unaryRequests() - requests).as("one round trip").isEqualTo(1);
        assertThat(second).isGreaterThan(first);
        assertThat(fixture.revision())
                .as("the delete and the put are one revision: one transaction")
                .isEqualTo(revision + 1)
                .isEqualTo(second);
        List<KeyValue> kvs = fixture.keysOf(key.name());
        assertThat(kvs).hasSize(1);
        assertThat(kvs.get(0).getKey().toString(UTF_8)).endsWith("/c:t2");
        assertThat(kvs.get(0).getCreateRevision()).isEqualTo(second);
        assertThat(kvs.get(0).getValue().toString(UTF_8)).isEqualTo("lease=30000ms owner=c:t2");
        long shared = kvs.get(0).getLease();
        HeldClaim h = HeldClaim.lock(key, owner("c:t2"), second);
        assertThat(s.renew(List.of(h), LEASE))
                .as("the store knows the new hold")
                .isEmpty();
        // handed on to a fixed lease: the receiver's key gets a lease of its own
        long third = granted(s.handOff(lock(key, owner("c:h1"), Lease.fixed(Duration.ofSeconds(20))), owner("c:t2")));
        assertThat(third).isGreaterThan(second);
        kvs = fixture.keysOf(key.name());
        assertThat(kvs).hasSize(1);
        long own = kvs.get(0).getLease();
        assertThat(own).as("not the shared lease").isNotEqualTo(shared);
        long ttl = fixture.client()
                .getLeaseClient()
                .timeToLive(own, LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getGrantedTTL();
        assertThat(ttl).isEqualTo(20);
        assertThat(s.release(HeldClaim.lock(key, owner("c:h1"), third))).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void handOff_giverDoesNotHold_notHeld_changesNothing() {
        EtcdLockStore s = store();
        EtcdLockStore other = store();
        LockKey key = name();
        var unused = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        fixture.expireHold(key.name());
        long holder = token(other.tryAcquire(lock(key, owner("o:t1"), RENEWED), false));
        long revision = fixture.revision();
        assertThat(s.handOff(lock(key, owner("c:t2"), RENEWED), owner("c:t1"))).isEqualTo(HandOff.notHeld());
        assertThat(fixture.revision()).as("nothing written").isEqualTo(revision);
        List<KeyValue> kvs = fixture.keysOf(key.name());
        assertThat(kvs).hasSize(1);
        assertThat(kvs.get(0).getCreateRevision()).isEqualTo(holder);
        assertThat(s.handOff(lock(key, owner("c:t2"), RENEWED), owner("c:t9")))
                .as("an owner that never held it")
                .isEqualTo(HandOff.notHeld());
        assertThat(fixture.keysOf(key.name())).hasSize(1);
    }

    @Test
    void handOff_anotherClientQueuedFirst_queuesTheReceiverBehindIt() {
        EtcdLockStore a = store();
        EtcdLockStore b = store();
        LockKey key = name();
        long first = token(a.tryAcquire(lock(key, owner("a:t1"), RENEWED), false));
        assertThat(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(a.handOff(lock(key, owner("a:t2"), RENEWED), owner("a:t1"))).isEqualTo(HandOff.queued());
        assertThat(fixture.keysOf(key.name()))
                .extracting(kv -> kv.getKey().toString(UTF_8).replaceAll(".*/", ""))
                .as("the giver's key is gone; the receiver waits behind the other client")
                .containsExactly("b:t1", "a:t2");
        assertThat(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        long second = token(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true));
        assertThat(b.release(HeldClaim.lock(key, owner("b:t1"), second))).isTrue();
        long third = token(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true));
        assertThat(first).isLessThan(second);
        assertThat(second).isLessThan(third);
        assertThat(a.release(HeldClaim.lock(key, owner("a:t2"), third))).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void handOff_queued_thenAbandoned_leavesNoKey() {
        EtcdLockStore a = store();
        EtcdLockStore b = store();
        LockKey key = name();
        var unused = token(a.tryAcquire(lock(key, owner("a:t1"), RENEWED), false));
        assertThat(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(a.handOff(lock(key, owner("a:h1"), Lease.fixed(Duration.ofSeconds(20))), owner("a:t1")))
                .isEqualTo(HandOff.queued());
        long own = fixture.keysOf(key.name()).get(1).getLease();
        a.abandon(lock(key, owner("a:h1"), Lease.fixed(Duration.ofSeconds(20))));
        assertThat(fixture.keysOf(key.name()))
                .extracting(kv -> kv.getKey().toString(UTF_8).replaceAll(".*/", ""))
                .containsExactly("b:t1");
        Eventually.within(
                Timing.seconds(3), "the waiter's own lease revoked", () -> !leases().contains(Long.toHexString(own)));
        long second = token(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true));
        assertThat(b.release(HeldClaim.lock(key, owner("b:t1"), second))).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void handOff_receiverAlreadyQueued_grantsItsOwnKey() {
        EtcdLockStore a = store();
        LockKey key = name();
        long first = token(a.tryAcquire(lock(key, owner("a:t1"), RENEWED), false));
        assertThat(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        long queuedAt = fixture.keysOf(key.name()).get(1).getCreateRevision();
        long second = granted(a.handOff(lock(key, owner("a:t2"), RENEWED), owner("a:t1")));
        assertThat(second).as("the key it queued with").isEqualTo(queuedAt).isGreaterThan(first);
        assertThat(fixture.keysOf(key.name()))
                .extracting(KeyValue::getCreateRevision)
                .containsExactly(queuedAt);
        HeldClaim h = HeldClaim.lock(key, owner("a:t2"), second);
        assertThat(a.renew(List.of(h), LEASE)).isEmpty();
        assertThat(a.release(h)).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void handOff_receiverAlreadyQueuedBehindAnotherClient_staysInItsPlace() {
        EtcdLockStore a = store();
        EtcdLockStore b = store();
        LockKey key = name();
        var unused = token(a.tryAcquire(lock(key, owner("a:t1"), RENEWED), false));
        assertThat(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        long queuedAt = fixture.keysOf(key.name()).get(2).getCreateRevision();
        assertThat(a.handOff(lock(key, owner("a:t2"), RENEWED), owner("a:t1"))).isEqualTo(HandOff.queued());
        assertThat(fixture.keysOf(key.name()))
                .extracting(KeyValue::getCreateRevision)
                .as("the receiver kept its place behind b")
                .hasSize(2)
                .endsWith(queuedAt);
        long second = token(b.tryAcquire(lock(key, owner("b:t1"), RENEWED), true));
        assertThat(b.release(HeldClaim.lock(key, owner("b:t1"), second))).isTrue();
        assertThat(token(a.tryAcquire(lock(key, owner("a:t2"), RENEWED), true)))
                .isEqualTo(queuedAt)
                .isGreaterThan(second);
        assertThat(a.release(HeldClaim.lock(key, owner("a:t2"), queuedAt))).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void uncontendedAcquireAndRelease_twoTransactions() {
        EtcdLockStore s = store();
        LockKey key = name();
        long warm = token(s.tryAcquire(lock(key, owner("c:t0"), RENEWED), false)); // the shared lease, granted once
        assertThat(s.release(HeldClaim.lock(key, owner("c:t0"), warm))).isTrue();
        String endpoint = etcd.endpoints().split(",")[0];
        long txns = EtcdFixture.handled(endpoint, "Txn");
        long deletes = EtcdFixture.handled(endpoint, "DeleteRange");
        long requests = unaryRequests();
        long token = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), token))).isTrue();
        assertThat(EtcdFixture.handled(endpoint, "Txn") - txns)
                .as("the acquire, and the release's revision-checked delete")
                .isEqualTo(2);
        assertThat(EtcdFixture.handled(endpoint, "DeleteRange") - deletes).isZero();
        assertThat(unaryRequests() - requests).isEqualTo(2);
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void release_keyOfTheOwnerRecreatedBehindItsBack_returnsFalse() throws Exception {
        EtcdLockStore s = store();
        LockKey key = name();
        long token = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        KeyValue hold = fixture.keysOf(key.name()).get(0);
        fixture.client().getKVClient().delete(hold.getKey()).get(5, TimeUnit.SECONDS);
        fixture.client().getKVClient().put(hold.getKey(), hold.getValue()).get(5, TimeUnit.SECONDS);
        long recreated = fixture.keysOf(key.name()).get(0).getCreateRevision();
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), token)))
                .as("not the hold it was granted")
                .isFalse();
        assertThat(fixture.keysOf(key.name()))
                .as("the owner's newer key at the same path, untouched by the old hold's release")
                .extracting(KeyValue::getCreateRevision)
                .containsExactly(recreated);
        fixture.client().getKVClient().delete(hold.getKey()).get(5, TimeUnit.SECONDS);
    }

    /**
     * A release that arrives after its hold ended and the same owner acquired again (a late or repeated release) leaves
     * the newer hold alone: the delete compares the key's create revision with the old hold's token.
     */
    @Test
    void release_ofAnEndedHold_afterTheOwnerAcquiredAgain_leavesTheNewerHold() {
        EtcdLockStore s = store();
        LockKey key = name();
        long first = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), first))).isTrue();
        long second = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), first)))
                .as("the first hold's release, repeated")
                .isFalse();
        assertThat(fixture.keysOf(key.name()))
                .as("the newer hold's key")
                .extracting(KeyValue::getCreateRevision)
                .containsExactly(second);
        assertThat(s.renew(List.of(HeldClaim.lock(key, owner("c:t1"), second)), LEASE))
                .as("the newer hold is still renewed")
                .isEmpty();
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), second))).isTrue();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    // ---------------------------------------------------------------- jetcd #291: no late grant to nobody

    @Test
    void abandon_waiterThatGaveUp_neverBecomesTheHolder() {
        EtcdLockStore holder = store();
        EtcdLockStore waiter = store();
        LockKey key = name();
        long token = token(holder.tryAcquire(lock(key, owner("h:t1"), RENEWED), true));
        assertThat(waiter.tryAcquire(lock(key, owner("w:t1"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        waiter.abandon(lock(key, owner("w:t1"), RENEWED));
        assertThat(holder.release(HeldClaim.lock(key, owner("h:t1"), token))).isTrue();
        assertThat(holder.inspect(key)).as("nobody was granted the lock").isEmpty();
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    /**
     * jetcd issue #291: with jetcd's Lock, a waiter whose request timed out on the client can still be granted the lock
     * on the server, and nobody ever releases it. Here the holder's release races the waiter's deadline, many times;
     * whichever wins, no hold is left that nobody owns.
     */
    @Test
    void tryLock_timeoutRacingTheRelease_neverLeavesAGrantNobodyOwns() throws Exception {
        LockClient holderClient = client();
        LockClient waiterClient = client();
        ScheduledExecutorService releaser = Executors.newSingleThreadScheduledExecutor();
        opened.add(releaser::shutdownNow);
        int granted = 0;
        int timedOut = 0;
        for (int i = 0; i < 20; i++) {
            String name = "race-" + UUID.randomUUID();
            DistributedLock holder = holderClient.lock(name);
            DistributedLock waiter = waiterClient.lock(name);
            var hold = holder.acquire();
            long waitMillis = 100;
            CountDownLatch released = new CountDownLatch(1);
            releaser.schedule(
                    () -> {
                        hold.release();
                        released.countDown();
                    },
                    waitMillis - 6 + (i % 12),
                    TimeUnit.MILLISECONDS);
            boolean got = waiter.tryLock(waitMillis, TimeUnit.MILLISECONDS);
            assertThat(released.await(5, TimeUnit.SECONDS)).isTrue();
            if (got) {
                granted++;
                assertThat(waiter.isHeldByCurrentThread()).isTrue();
                waiter.unlock();
            } else {
                timedOut++;
                assertThat(waiter.isHeldByCurrentThread()).isFalse();
            }
            assertThat(waiterClient.admin().inspect(name))
                    .as("iteration %d (waiter got it: %s): a hold nobody owns", i, got)
                    .isEmpty();
            assertThat(fixture.residue(name)).isEmpty();
            DistributedLock later = holderClient.lock(name);
            assertThat(later.tryLock()).as("free for the next owner").isTrue();
            later.unlock();
        }
        assertThat(granted + timedOut).isEqualTo(20);
    }

    // ---------------------------------------------------------------- renew

    @Test
    void renew_healthyHolds_returnsNothing() {
        EtcdLockStore s = store();
        LockKey k1 = name();
        LockKey k2 = name();
        long t1 = token(s.tryAcquire(lock(k1, owner("c:t1"), RENEWED), false));
        long t2 = token(s.tryAcquire(lock(k2, owner("c:h1"), RENEWED), false));
        Set<HeldClaim> gone =
                s.renew(List.of(HeldClaim.lock(k1, owner("c:t1"), t1), HeldClaim.lock(k2, owner("c:h1"), t2)), LEASE);
        assertThat(gone).isEmpty();
    }

    @Test
    void renew_leaseRevokedBehindItsBack_reportsEveryHoldOnItGone() throws Exception {
        EtcdLockStore s = store();
        LockKey k1 = name();
        LockKey k2 = name();
        HeldClaim h1 = HeldClaim.lock(k1, owner("c:t1"), token(s.tryAcquire(lock(k1, owner("c:t1"), RENEWED), false)));
        HeldClaim h2 = HeldClaim.lock(k2, owner("c:t2"), token(s.tryAcquire(lock(k2, owner("c:t2"), RENEWED), false)));
        long lease = fixture.keysOf(k1.name()).get(0).getLease();
        assertThat(fixture.keysOf(k2.name()).get(0).getLease())
                .as("one lease per client")
                .isEqualTo(lease);
        fixture.client().getLeaseClient().revoke(lease).get(5, TimeUnit.SECONDS);
        assertThat(s.renew(List.of(h1, h2), LEASE)).containsExactlyInAnyOrder(h1, h2);
        // the store takes a new lease for the next hold
        long next = token(s.tryAcquire(lock(k1, owner("c:t3"), RENEWED), false));
        assertThat(next).isGreaterThan(h1.fencingToken());
        assertThat(fixture.keysOf(k1.name()).get(0).getLease()).isNotEqualTo(lease);
    }

    @Test
    void renew_keyDeletedBehindItsBack_reportsOnlyThatHold() {
        EtcdLockStore s = store();
        LockKey k1 = name();
        LockKey k2 = name();
        HeldClaim h1 = HeldClaim.lock(k1, owner("c:t1"), token(s.tryAcquire(lock(k1, owner("c:t1"), RENEWED), false)));
        HeldClaim h2 = HeldClaim.lock(k2, owner("c:t2"), token(s.tryAcquire(lock(k2, owner("c:t2"), RENEWED), false)));
        fixture.expireHold(k1.name());
        assertThat(s.renew(List.of(h1, h2), LEASE)).containsExactly(h1);
    }

    @Test
    void renew_keepsTheSharedLeaseAlive() throws Exception {
        Duration shortLease = Duration.ofSeconds(1);
        EtcdLockStore s = new EtcdLockStore(
                Client.builder().endpoints(etcd.endpoints()).build(),
                true,
                NAMESPACE,
                shortLease,
                Duration.ofSeconds(5),
                Ticker.system());
        opened.add(s);
        LockKey key = name();
        HeldClaim h = HeldClaim.lock(
                key, owner("c:t1"), token(s.tryAcquire(lock(key, owner("c:t1"), Lease.renewed(shortLease)), false)));
        long lease = fixture.keysOf(key.name()).get(0).getLease();
        long granted = fixture.client()
                .getLeaseClient()
                .timeToLive(lease, LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getGrantedTTL();
        assertThat(granted).as("lease + 1 s of slack, whole seconds").isEqualTo(2);
        for (int i = 0; i < 8; i++) { // 4 s, twice the TTL
            Timing.sleep(Duration.ofMillis(500));
            assertThat(s.renew(List.of(h), shortLease)).isEmpty();
        }
        assertThat(fixture.keysOf(key.name())).hasSize(1);
    }

    /**
     * Once the shared lease's last confirmation is older than half of its one second of slack, an acquire sends a
     * keep-alive without waiting for it (that confirmation still covers the hold); once it is older than three quarters,
     * an acquire waits for one. Here keep-alives are held back for 2 s on their way to etcd, and the store's clock is
     * set by hand.
     */
    @Test
    void sharedLease_keepAliveAfterHalfTheSlack_doesNotHoldUpTheAcquire_afterThreeQuartersItDoes() {
        AtomicLong now = new AtomicLong();
        AtomicBoolean slow = new AtomicBoolean();
        AtomicInteger keepAlives = new AtomicInteger();
        ScheduledExecutorService delayer = Executors.newSingleThreadScheduledExecutor();
        opened.add(delayer::shutdownNow);
        EtcdLockStore s = new EtcdLockStore(
                Client.builder()
                        .endpoints(etcd.endpoints())
                        .interceptor(holdBackKeepAlives(slow, keepAlives, delayer))
                        .build(),
                true,
                NAMESPACE,
                LEASE,
                Duration.ofSeconds(5),
                now::get);
        opened.add(s);
        LockKey key = name();
        OwnerId owner = owner("c:t1");
        long first = token(s.tryAcquire(lock(key, owner, RENEWED), false)); // grants the shared lease: confirmed at 0
        assertThat(s.release(HeldClaim.lock(key, owner, first))).isTrue();
        slow.set(true);

        now.set(TimeUnit.MILLISECONDS.toNanos(600));
        long t0 = System.nanoTime();
        long second = token(s.tryAcquire(lock(key, owner, RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner, second))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - t0))
                .as("a keep-alive went out, and the acquire did not wait for it")
                .isLessThan(Duration.ofMillis(1500));
        assertThat(keepAlives.get()).isEqualTo(1);

        now.set(TimeUnit.MILLISECONDS.toNanos(800));
        t0 = System.nanoTime();
        long third = token(s.tryAcquire(lock(key, owner, RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner, third))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - t0))
                .as("the acquire waited for the keep-alive in flight")
                .isGreaterThan(Duration.ofMillis(1000));
        assertThat(keepAlives.get()).as("the one in flight was recent enough").isEqualTo(1);

        now.set(TimeUnit.MILLISECONDS.toNanos(1100)); // half the slack after that keep-alive was sent: none due
        t0 = System.nanoTime();
        long fourth = token(s.tryAcquire(lock(key, owner, RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner, fourth))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(1500));
        assertThat(keepAlives.get())
                .as("its answer dated the lease from its sending")
                .isEqualTo(1);
        assertThat(List.of(first, second, third, fourth)).isSorted().doesNotHaveDuplicates();
    }

    /** Holds back the first request of every LeaseKeepAlive stream opened while {@code slow} is set, by 2 s. */
    private static ClientInterceptor holdBackKeepAlives(
            AtomicBoolean slow, AtomicInteger streams, ScheduledExecutorService delayer) {
        return new ClientInterceptor() {
            @Override
            public <Q, A> ClientCall<Q, A> interceptCall(
                    MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
                ClientCall<Q, A> call = next.newCall(method, options);
                if (!method.getFullMethodName().equals("etcdserverpb.Lease/LeaseKeepAlive") || !slow.get()) {
                    return call;
                }
                streams.incrementAndGet();
                AtomicBoolean held = new AtomicBoolean();
                return new ForwardingClientCall.SimpleForwardingClientCall<Q, A>(call) {
                    @Override
                    public void sendMessage(Q message) {
                        if (held.compareAndSet(false, true)) {
                            var unused = delayer.schedule(() -> delegate().sendMessage(message), 2, TimeUnit.SECONDS);
                        } else {
                            super.sendMessage(message);
                        }
                    }
                };
            }
        };
    }

    // ---------------------------------------------------------------- fixed leases

    @Test
    void fixedLease_hasALeaseOfItsOwn_withItsLengthAsTtl() throws Exception {
        EtcdLockStore s = store();
        LockKey watchdogKey = name();
        LockKey fixedKey = name();
        var unused = token(s.tryAcquire(lock(watchdogKey, owner("c:t1"), RENEWED), false));
        long fixed = token(s.tryAcquire(lock(fixedKey, owner("c:h1"), Lease.fixed(Duration.ofSeconds(7))), false));
        long shared = fixture.keysOf(watchdogKey.name()).get(0).getLease();
        long own = fixture.keysOf(fixedKey.name()).get(0).getLease();
        assertThat(own).isNotEqualTo(shared);
        assertThat(grantedTtl(own)).isEqualTo(7);
        assertThat(s.release(HeldClaim.lock(fixedKey, owner("c:h1"), fixed))).isTrue();
        Eventually.within(Timing.seconds(3), "the hold's own lease revoked on release", () -> !leases().contains(
                        Long.toHexString(own)));
    }

    @Test
    void fixedLease_endsInEtcdAfterItsTtl_withNoClientAction() throws Exception {
        EtcdLockStore s = store();
        LockKey watchdogKey = name();
        LockKey fixedKey = name();
        var unused = token(s.tryAcquire(lock(watchdogKey, owner("c:t1"), RENEWED), false));
        long start = System.nanoTime();
        var unused2 = token(s.tryAcquire(lock(fixedKey, owner("c:h1"), Lease.fixed(Duration.ofMillis(200))), false));
        long own = fixture.keysOf(fixedKey.name()).get(0).getLease();
        assertThat(grantedTtl(own)).as("200 ms rounded up to whole seconds").isEqualTo(1);
        // the hold's lease has passed, and the client stays open and idle: only etcd's TTL may end the key
        Duration toMark = Duration.ofMillis(500).minusNanos(System.nanoTime() - start);
        if (!toMark.isNegative()) {
            Timing.sleep(toMark);
        }
        assertThat(fixture.keysOf(fixedKey.name()))
                .as("no timer of the client revoked it at its lease end")
                .hasSize(1);
        // renewing the client's watchdog holds keeps only their lease alive
        var held = HeldClaim.lock(
                watchdogKey,
                owner("c:t1"),
                fixture.keysOf(watchdogKey.name()).get(0).getCreateRevision());
        assertThat(s.renew(List.of(held), LEASE)).isEmpty();
        Eventually.within(Timing.seconds(4), "etcd expired the fixed lease", () -> fixture.keysOf(fixedKey.name())
                .isEmpty());
        assertThat(System.nanoTime() - start).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(900));
        assertThat(leases()).as("the lease is gone with its key").doesNotContain(Long.toHexString(own));
        assertThat(fixture.keysOf(watchdogKey.name())).hasSize(1);
        // the owner acquires again: a fresh key on a fresh lease, a greater token
        long again = token(s.tryAcquire(lock(fixedKey, owner("c:h1"), Lease.fixed(Duration.ofSeconds(5))), false));
        assertThat(fixture.keysOf(fixedKey.name()))
                .extracting(KeyValue::getCreateRevision)
                .containsExactly(again);
        assertThat(s.release(HeldClaim.lock(fixedKey, owner("c:h1"), again))).isTrue();
    }

    // ---------------------------------------------------------------- abandonHold (SessionHolds)

    @Test
    void abandonHold_fixedLease_deletesTheKey_andRevokesItsOwnLease() throws Exception {
        EtcdLockStore s = store();
        LockKey watchdogKey = name();
        LockKey fixedKey = name();
        long watchdog = token(s.tryAcquire(lock(watchdogKey, owner("c:t1"), RENEWED), false));
        long fixed = token(s.tryAcquire(lock(fixedKey, owner("c:h1"), Lease.fixed(Duration.ofSeconds(20))), false));
        long shared = fixture.keysOf(watchdogKey.name()).get(0).getLease();
        long own = fixture.keysOf(fixedKey.name()).get(0).getLease();
        assertThat(own).isNotEqualTo(shared);
        s.abandonHold(HeldClaim.lock(fixedKey, owner("c:h1"), fixed));
        Eventually.within(Timing.seconds(3), "the hold's key deleted", () -> fixture.keysOf(fixedKey.name())
                .isEmpty());
        Eventually.within(
                Timing.seconds(3), "the hold's own lease revoked", () -> !leases().contains(Long.toHexString(own)));
        assertThat(leases()).as("the shared lease is kept").contains(Long.toHexString(shared));
        assertThat(fixture.keysOf(watchdogKey.name()))
                .extracting(KeyValue::getCreateRevision)
                .containsExactly(watchdog);
        // a second call finds the hold gone: a no-op
        s.abandonHold(HeldClaim.lock(fixedKey, owner("c:h1"), fixed));
        assertThat(s.release(HeldClaim.lock(watchdogKey, owner("c:t1"), watchdog)))
                .isTrue();
    }

    @Test
    void abandonHold_ofAnEndedHold_leavesTheOwnersNewerKey_andTheSharedLease() throws Exception {
        EtcdLockStore s = store();
        LockKey key = name();
        LockKey other = name();
        long otherToken = token(s.tryAcquire(lock(other, owner("c:t2"), RENEWED), false));
        long first = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), first))).isTrue();
        long second = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), false));
        assertThat(second).isGreaterThan(first);
        long shared = fixture.keysOf(key.name()).get(0).getLease();
        // abandonHold does not wait for its delete; endHold is the same step with its answer, waited for here
        s.endHold(HeldClaim.lock(key, owner("c:t1"), first)).get(5, TimeUnit.SECONDS);
        assertThat(fixture.keysOf(key.name()))
                .as("the owner's newer key, a newer hold")
                .extracting(KeyValue::getCreateRevision)
                .containsExactly(second);
        assertThat(s.renew(List.of(HeldClaim.lock(key, owner("c:t1"), second)), LEASE))
                .as("the newer hold is still renewed")
                .isEmpty();
        s.abandonHold(HeldClaim.lock(key, owner("c:t1"), second));
        Eventually.within(Timing.seconds(3), "the newer hold's key deleted", () -> fixture.keysOf(key.name())
                .isEmpty());
        assertThat(leases()).as("a watchdog hold's lease is shared: kept").contains(Long.toHexString(shared));
        assertThat(fixture.keysOf(other.name()))
                .extracting(KeyValue::getCreateRevision)
                .containsExactly(otherToken);
        assertThat(s.release(HeldClaim.lock(other, owner("c:t2"), otherToken))).isTrue();
    }

    private static long grantedTtl(long lease) throws Exception {
        return fixture.client()
                .getLeaseClient()
                .timeToLive(lease, LeaseOption.DEFAULT)
                .get(5, TimeUnit.SECONDS)
                .getGrantedTTL();
    }

    @Test
    void fixedLease_ofAClientThatDied_endsByItself() throws Exception {
        Client raw = Client.builder().endpoints(etcd.endpoints()).build();
        EtcdLockStore s = new EtcdLockStore(raw, false, NAMESPACE, LEASE, Duration.ofSeconds(5), Ticker.system());
        LockKey key = name();
        var unused = token(s.tryAcquire(lock(key, owner("c:h1"), Lease.fixed(Duration.ofSeconds(1))), false));
        opened.add(s);
        raw.close(); // the process is gone: no release, no revoke, no timer can reach etcd
        Eventually.within(Timing.seconds(5), "lease expired in etcd", () -> fixture.keysOf(key.name())
                .isEmpty());
    }

    // ---------------------------------------------------------------- watches

    @Test
    void subscribe_wakesOnRelease_andOnDeletionBehindTheBack() throws Exception {
        EtcdLockStore s = store();
        EtcdLockStore other = store();
        LockKey key = name();
        long token = token(other.tryAcquire(lock(key, owner("o:t1"), RENEWED), false));
        AtomicInteger wakeUps = new AtomicInteger();
        try (Subscription sub = s.subscribe(key, wakeUps::incrementAndGet)) {
            assertThat(sub.notifies()).isTrue();
            assertThat(other.release(HeldClaim.lock(key, owner("o:t1"), token))).isTrue();
            Eventually.within(Timing.seconds(3), "woken by release", () -> wakeUps.get() == 1);
            var unused2 = token(other.tryAcquire(lock(key, owner("o:t2"), RENEWED), false));
            Timing.sleep(Duration.ofMillis(200));
            assertThat(wakeUps.get()).as("puts do not wake").isEqualTo(1);
            fixture.expireHold(key.name());
            Eventually.within(Timing.seconds(3), "woken by deletion", () -> wakeUps.get() == 2);
        }
    }

    @Test
    void subscribe_releaseRightAfterSubscribing_isNotMissed() throws Exception {
        EtcdLockStore s = store();
        EtcdLockStore other = store();
        for (int i = 0; i < 10; i++) {
            LockKey key = name();
            long token = token(other.tryAcquire(lock(key, owner("o:t1"), RENEWED), false));
            CountDownLatch woken = new CountDownLatch(1);
            try (Subscription sub = s.subscribe(key, woken::countDown)) {
                // before the watch stream may be set up
                assertThat(other.release(HeldClaim.lock(key, owner("o:t1"), token)))
                        .isTrue();
                assertThat(woken.await(3, TimeUnit.SECONDS))
                        .as("iteration %d", i)
                        .isTrue();
            }
        }
    }

    @Test
    void queuedWaiter_whoseWatchSawEveryOlderKeyGo_isGrantedWithNoRequest_andItsTokenIsItsKeys() throws Exception {
        EtcdLockStore holder = store();
        EtcdLockStore waiter = store();
        LockKey key = name();
        long held = token(holder.tryAcquire(lock(key, owner("h:t1"), RENEWED), false));
        CountDownLatch woken = new CountDownLatch(1);
        try (Subscription sub = waiter.subscribe(key, woken::countDown)) {
            assertThat(waiter.tryAcquire(lock(key, owner("w:t1"), RENEWED), true))
                    .isInstanceOf(Attempt.Busy.class);
            long queuedAt = fixture.keysOf(key.name()).get(1).getCreateRevision();
            assertThat(holder.release(HeldClaim.lock(key, owner("h:t1"), held))).isTrue();
            assertThat(woken.await(3, TimeUnit.SECONDS)).isTrue();
            long requests = unaryRequests();
            long token = token(waiter.tryAcquire(lock(key, owner("w:t1"), RENEWED), true));
            assertThat(unaryRequests() - requests)
                    .as("the watch's copy of the queue shows the waiter's key as the oldest")
                    .isZero();
            assertThat(token).isEqualTo(queuedAt).isGreaterThan(held);
            assertThat(holder.tryAcquire(lock(key, owner("h:t2"), RENEWED), false))
                    .as("etcd agrees: the waiter's key is the head")
                    .isInstanceOf(Attempt.Busy.class);
            assertThat(waiter.release(HeldClaim.lock(key, owner("w:t1"), token)))
                    .isTrue();
        }
        assertThat(fixture.keysOf(key.name())).isEmpty();
    }

    @Test
    void queuedWaiter_behindAnOlderKeyTheWatchShows_staysBusy_withNoRequest() throws Exception {
        EtcdLockStore holder = store();
        EtcdLockStore waiter = store();
        LockKey key = name();
        long held = token(holder.tryAcquire(lock(key, owner("h:t1"), RENEWED), false));
        try (Subscription sub = waiter.subscribe(key, () -> {})) {
            assertThat(waiter.tryAcquire(lock(key, owner("w:t1"), RENEWED), true))
                    .isInstanceOf(Attempt.Busy.class);
            // the holder's key stays: the mirror shows it older, so the waiter stays busy with no request
            long requests = unaryRequests();
            assertThat(waiter.tryAcquire(lock(key, owner("w:t1"), RENEWED), true))
                    .isInstanceOf(Attempt.Busy.class);
            assertThat(unaryRequests() - requests).isZero();
        }
        assertThat(holder.release(HeldClaim.lock(key, owner("h:t1"), held))).isTrue();
    }

    @Test
    void subscribeAgainSoonAfterClosing_takesOverTheIdleWatch_noRoundTrip_wakesOnlyTheNewSubscriber() throws Exception {
        EtcdLockStore s = store();
        EtcdLockStore other = store();
        LockKey key = name();
        AtomicInteger first = new AtomicInteger();
        s.subscribe(key, first::incrementAndGet).close();
        long requests = unaryRequests();
        AtomicInteger second = new AtomicInteger();
        try (Subscription sub = s.subscribe(key, second::incrementAndGet)) {
            assertThat(unaryRequests() - requests)
                    .as("the idle watch's mirror is current: no queue read")
                    .isZero();
            assertThat(s.openWatches()).isEqualTo(1);
            long token = token(other.tryAcquire(lock(key, owner("o:t1"), RENEWED), false));
            assertThat(other.release(HeldClaim.lock(key, owner("o:t1"), token))).isTrue();
            Eventually.within(Timing.seconds(3), "the new subscriber woken", () -> second.get() == 1);
            assertThat(first).as("the closed subscription is not woken").hasValue(0);
            sub.close();
            sub.close(); // a second close of the same subscription is a no-op
        }
        Eventually.within(
                Timing.seconds(3 + EtcdWatches.LINGER_MILLIS / 1000),
                "the idle watch closed after its linger time",
                () -> s.openWatches() == 0);
    }

    @Test
    void subscribe_onAnIdleWatch_releaseRightAfterSubscribing_isNotMissed() throws Exception {
        EtcdLockStore s = store();
        EtcdLockStore other = store();
        LockKey key = name();
        for (int i = 0; i < 10; i++) {
            long token = token(other.tryAcquire(lock(key, owner("o:t" + i), RENEWED), false));
            CountDownLatch woken = new CountDownLatch(1);
            try (Subscription sub = s.subscribe(key, woken::countDown)) {
                assertThat(other.release(HeldClaim.lock(key, owner("o:t" + i), token)))
                        .isTrue();
                assertThat(woken.await(3, TimeUnit.SECONDS))
                        .as("iteration %d", i)
                        .isTrue();
            }
        }
        assertThat(s.openWatches()).as("one watch served all ten subscriptions").isEqualTo(1);
    }

    @Test
    @SuppressWarnings("LockNotBeforeTry") // the release is the step under test
    void waiter_ownKeyDeletedBehindItsBack_queuesAgainAndAcquires() throws Exception {
        LockClient holderClient = client();
        LockClient waiterClient = client();
        String name = "requeue-" + UUID.randomUUID();
        DistributedLock holder = holderClient.lock(name);
        holder.lock();
        CountDownLatch acquired = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            DistributedLock w = waiterClient.lock(name);
            w.lock();
            acquired.countDown();
            w.unlock();
        });
        t.setDaemon(true);
        t.start();
        Eventually.within(
                Timing.seconds(3), "waiter queued", () -> fixture.keysOf(name).size() == 2);
        // the waiter's first, non-queued try puts a key and takes it away again; the queued attempt's key stays
        Timing.sleep(Duration.ofMillis(200));
        Eventually.within(
                Timing.seconds(3), "waiter queued", () -> fixture.keysOf(name).size() == 2);
        KeyValue waiterKey = fixture.keysOf(name).get(1);
        fixture.client().getKVClient().delete(waiterKey.getKey()).get(5, TimeUnit.SECONDS);
        Eventually.within(
                Timing.seconds(3),
                "waiter queued again",
                () -> fixture.keysOf(name).size() == 2
                        && fixture.keysOf(name).get(1).getCreateRevision() > waiterKey.getCreateRevision());
        holder.unlock();
        assertThat(acquired.await(Timing.seconds(3).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        t.join(Timing.seconds(3).toMillis());
        assertThat(fixture.keysOf(name)).isEmpty();
    }

    @Test
    @SuppressWarnings("LockNotBeforeTry") // the release is the step under test
    void waiter_watchBrokenByAServerRestart_isStillWokenByTheRelease() throws Exception {
        LockClient holderClient = client();
        LockClient waiterClient = client();
        String name = "restart-" + UUID.randomUUID();
        DistributedLock holder = holderClient.lock(name);
        holder.lock();
        CountDownLatch acquired = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            DistributedLock w = waiterClient.lock(name);
            w.lock();
            acquired.countDown();
            w.unlock();
        });
        t.setDaemon(true);
        t.start();
        // its first, non-queued try writes a key and deletes it again: wait until it waits with its queued key
        Eventually.within(
                Timing.seconds(3), "waiter queued", () -> fixture.keysOf(name).size() == 2 && parkedInTheEngine(t));
        etcd.restart(); // the data (keys, leases) survives; every watch stream breaks
        Timing.sleep(Duration.ofSeconds(1));
        holder.unlock();
        // well inside the waiter's periodic re-check (a third of its 30 s lease): woken by the restarted watch
        assertThat(acquired.await(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        t.join(Timing.seconds(3).toMillis());
        Eventually.within(
                Timing.seconds(3), "nothing left", () -> fixture.keysOf(name).isEmpty());
    }

    /** Whether {@code t} waits in the engine, not in a store call (a frame of the store or one of its parts). */
    private static boolean parkedInTheEngine(Thread t) {
        StackTraceElement[] stack = t.getStackTrace();
        String parts = EtcdLockStore.class.getPackageName() + ".Etcd";
        String test = EtcdLockStoreIT.class.getName();
        return Arrays.stream(stack)
                        .noneMatch(f -> f.getClassName().startsWith(parts)
                                && !f.getClassName().startsWith(test))
                && Arrays.stream(stack).anyMatch(f -> f.getMethodName().equals("parkNanos"));
    }

    // ---------------------------------------------------------------- operators

    @Test
    void inspect_list_forceRelease_showTheHolderAndItsQueue() {
        EtcdLockStore s = store();
        String base = "ops-" + UUID.randomUUID();
        LockKey a = new LockKey(base + "/a");
        LockKey b = new LockKey(base + "/b");
        long ta = token(s.tryAcquire(lock(a, owner("c:t1"), RENEWED), true));
        assertThat(s.tryAcquire(lock(a, owner("c:t2"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        long tb = token(s.tryAcquire(lock(b, owner("c:h1"), Lease.fixed(Duration.ofSeconds(20))), false));
        LockInfo info = s.inspect(a).orElseThrow();
        assertThat(info.name()).isEqualTo(a.name());
        assertThat(info.owner()).isEqualTo("c:t1");
        assertThat(info.fencingToken()).isEqualTo(ta);
        assertThat(info.waiters()).isEqualTo(1);
        assertThat(info.remainingLease()).isGreaterThan(Duration.ofSeconds(25)).isLessThanOrEqualTo(LEASE);
        List<LockInfo> listed = s.list(base, 10);
        assertThat(listed).extracting(LockInfo::name).containsExactly(a.name(), b.name());
        assertThat(listed.get(1).fencingToken()).isEqualTo(tb);
        assertThat(s.list(base + "/b", 10)).extracting(LockInfo::name).containsExactly(b.name());
        assertThat(s.list(base, 1)).hasSize(1);
        LockInfo forced = s.forceRelease(a).orElseThrow();
        assertThat(forced.fencingToken()).isEqualTo(ta);
        assertThat(s.inspect(a).orElseThrow().owner())
                .as("the next in line holds it now")
                .isEqualTo("c:t2");
        assertThat(s.forceRelease(new LockKey(base + "/none"))).isEmpty();
    }

    @Test
    void forceRelease_ofOneOwner_endsOnlyItsHold_aWaiterKeepsItsPlace() {
        EtcdLockStore s = store();
        LockKey key = name();
        assertThat(s.kinds())
                .containsExactlyInAnyOrder(Claim.Kind.LOCK, Claim.Kind.READ_WRITE_LOCK, Claim.Kind.SEMAPHORE);
        assertThat(s.available(key, Claim.Kind.LOCK, 1)).as("free").isEqualTo(1);
        long holder = token(s.tryAcquire(lock(key, owner("c:t1"), RENEWED), true));
        assertThat(s.tryAcquire(lock(key, owner("c:t2"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(s.available(key, Claim.Kind.LOCK, 1)).as("held").isZero();
        assertThat(s.forceRelease(key, owner("c:t2")))
                .as("a waiter holds nothing")
                .isEmpty();
        assertThat(s.forceRelease(key, owner("c:t9")))
                .as("an owner without a key")
                .isEmpty();
        assertThat(fixture.keysOf(key.name())).hasSize(2);
        LockInfo forced = s.forceRelease(key, owner("c:t1")).orElseThrow();
        assertThat(forced.owner()).isEqualTo("c:t1");
        assertThat(forced.fencingToken()).isEqualTo(holder);
        assertThat(forced.waiters()).isEqualTo(1);
        long next = token(s.tryAcquire(lock(key, owner("c:t2"), RENEWED), true));
        assertThat(next).as("the waiter's own key, next in line").isGreaterThan(holder);
        assertThat(s.release(HeldClaim.lock(key, owner("c:t1"), holder)))
                .as("the forced hold is gone")
                .isFalse();
        assertThat(s.release(HeldClaim.lock(key, owner("c:t2"), next))).isTrue();
        assertThat(s.available(key, Claim.Kind.LOCK, 1)).isEqualTo(1);
    }

    // ---------------------------------------------------------------- leftovers

    @Test
    void close_afterHoldsAndWaiters_leavesNoKeysAndNoLeases() throws Exception {
        Set<String> before = leases();
        EtcdLockStore s = store();
        EtcdLockStore other = store();
        LockKey k1 = name();
        LockKey k2 = name();
        var unused = token(other.tryAcquire(lock(k1, owner("o:t1"), RENEWED), false));
        assertThat(s.tryAcquire(lock(k1, owner("c:t1"), RENEWED), true)).isInstanceOf(Attempt.Busy.class);
        assertThat(s.tryAcquire(lock(k1, owner("c:h1"), Lease.fixed(Duration.ofSeconds(20))), true))
                .isInstanceOf(Attempt.Busy.class);
        var unused2 = token(s.tryAcquire(lock(k2, owner("c:h2"), Lease.fixed(Duration.ofSeconds(20))), false));
        Set<String> during = new java.util.HashSet<>(leases());
        during.removeAll(before);
        assertThat(during).as("two shared leases and two of their own").hasSize(4);
        s.close();
        other.close();
        assertThat(fixture.keysOf(k1.name())).isEmpty();
        assertThat(fixture.keysOf(k2.name())).isEmpty();
        assertThat(leases()).doesNotContainAnyElementsOf(during);
    }

    @Test
    void lockClient_usesTheNamespace_andNoKeyOutsideIt() {
        LockClient c = client();
        String name = "../../etc/" + UUID.randomUUID();
        DistributedLock lock = c.lock(name);
        assertThat(lock.tryLock()).isTrue();
        List<KeyValue> kvs = fixture.keysOf(name);
        assertThat(kvs).hasSize(1);
        assertThat(kvs.get(0).getKey().toString(UTF_8)).startsWith(NAMESPACE + "..%2F..%2Fetc%2F");
        lock.unlock();
    }

    /** The live lease ids, in Long.toHexString's form (etcdctl pads them to 16 digits with zeros). */
    private static Set<String> leases() {
        String out = etcd.etcdctl("lease", "list");
        return Arrays.stream(out.split("\n"))
                .map(String::trim)
                .filter(l -> !l.isEmpty() && !l.startsWith("found"))
                .map(l -> Long.toHexString(Long.parseUnsignedLong(l, 16)))
                .collect(Collectors.toSet());
    }
}
