package io.distlock.testkit;

import io.distlock.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;

/**
 * The fixture a backend's {@code *IT} class provides to the contracts it implements. Clients made with {@link
 * #newClient()} are closed after each test.
 *
 * <pre>{@code
 * class RedisLockIT implements AllLockContracts {
 *     @RegisterExtension static final RedisServer redis = RedisServer.onFreePort();
 *     public LockClient createClient(Duration watchdogLease) {
 *         return RedisLockClient.builder().uri(redis.uri()).leaseTime(watchdogLease).build();
 *     }
 *     ...
 * }
 * }</pre>
 */
public interface BackendUnderTest {

    /** A new client on the store under test whose watchdog lease is {@code watchdogLease}. Not tracked. */
    LockClient createClient(Duration watchdogLease);

    /**
     * Removes the current hold of {@code name} behind its owner's back, as if its lease had run out or an operator
     * had deleted it; the fence counter stays. The owner's client is not told.
     */
    void expireHold(String name);

    /**
     * What the store keeps for {@code name} apart from what must stay for ever (the fence counter): hold keys or
     * rows, queue entries, nodes, waiters. Empty when the lock is free and nothing is left behind. Each entry is a
     * human-readable description for assertion messages.
     */
    List<String> residue(String name);

    /**
     * How a child JVM makes a client on the same store, for the multi-process contracts; empty if the store cannot
     * be shared between processes.
     */
    default Optional<ChildClient> childClient() {
        return Optional.empty();
    }

    /** A factory class and its argument for child JVMs. */
    record ChildClient(Class<? extends ClientFactory> factory, String argument) {}

    /**
     * How long the holds of a process that died may outlive it where a hold lasts as long as a session and the store
     * reports no lease (ZooKeeper's session timeout, a database session that ends with its connection), plus the
     * store's slack. Used with {@link #childClient()}.
     */
    default Duration deadOwnerRelease() {
        return Duration.ofSeconds(10);
    }

    /** The default watchdog lease the contracts run with: long enough that no test outlives it by accident. */
    default Duration defaultLease() {
        return Duration.ofSeconds(30);
    }

    /** A tracked client with {@link #defaultLease()}, closed after the test. */
    default LockClient newClient() {
        return newClient(defaultLease());
    }

    /** A tracked client with a short watchdog lease, closed after the test. */
    default LockClient newClient(Duration watchdogLease) {
        LockClient client = createClient(watchdogLease);
        Tracked.CLIENTS.computeIfAbsent(this, k -> new ArrayList<>()).add(client);
        return client;
    }

    /** A name no other test uses. */
    default String uniqueName() {
        return "contract-" + UUID.randomUUID();
    }

    @AfterEach
    default void closeTrackedClients() {
        List<LockClient> clients = Tracked.CLIENTS.remove(this);
        if (clients != null) {
            for (LockClient c : clients) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    // a test may have broken the store on purpose; the next test gets fresh clients
                }
            }
        }
    }

    /** Holder of the clients made per test instance. */
    final class Tracked {
        static final Map<Object, List<LockClient>> CLIENTS = new ConcurrentHashMap<>();

        private Tracked() {}
    }
}
