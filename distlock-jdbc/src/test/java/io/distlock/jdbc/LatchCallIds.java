package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.spi.CounterStore;
import io.distlock.spi.LockKey;
import io.distlock.testkit.BackendUnderTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A count-down sent twice with one call id (a retry after a lost answer) counts once, on the store itself. */
interface LatchCallIds extends BackendUnderTest {

    @Test
    default void countDown_sameCallIdTwice_countsOnce() {
        String name = uniqueName();
        CounterStore store = (CounterStore) ((JdbcLockClient) newClient()).store();
        LockKey key = new LockKey(name);
        Duration expiry = Duration.ofMinutes(1);
        assertThat(store.trySetCount(key, 3, expiry)).isTrue();
        assertThat(store.countDown(key, "call-1", expiry)).isEqualTo(2);
        assertThat(store.countDown(key, "call-1", expiry))
                .as("the same call again")
                .isEqualTo(2);
        assertThat(store.count(key)).isEqualTo(2);
        assertThat(store.countDown(key, "call-2", expiry)).isEqualTo(1);
        assertThat(store.countDown(key, "call-3", expiry)).isZero();
        assertThat(store.countDown(key, "call-3", expiry)).isZero();
        assertThat(residue(name)).as("a latch at zero leaves nothing").isEmpty();
    }
}
