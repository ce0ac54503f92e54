package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.internal.Checks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Contract 10: bad input gets a clear exception naming the argument and value; odd names are ordinary names. */
public interface BadInputContract extends BackendUnderTest {

    @Test
    default void lock_nullOrBlankName_isRejected() {
        LockClient client = newClient();
        assertThatThrownBy(() -> client.lock(nullString()))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> client.fairLock(nullString())).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> client.lock("  \t"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name");
        assertThatThrownBy(() -> client.lock("")).isInstanceOf(IllegalArgumentException.class);
    }

    /** FAULTS.md section 5 row 4: a name past the limit fails at once, with its length, and touches no store. */
    @Test
    default void name_longerThanTheLimit_isRejectedWithItsLength_leavesNothing() {
        LockClient client = newClient();
        String name = uniqueName();
        String tooLong = name + "z".repeat(Checks.MAX_NAME_LENGTH + 1 - name.length());
        String huge = name + "z".repeat(1 << 20);
        for (String bad : List.of(tooLong, huge)) {
            String length = Integer.toString(bad.length());
            assertThatThrownBy(() -> client.lock(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("name")
                    .hasMessageEndingWith(length);
            assertThatThrownBy(() -> client.fairLock(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageEndingWith(length);
            assertThatThrownBy(() -> client.admin().inspect(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageEndingWith(length);
            assertThatThrownBy(() -> client.admin().forceUnlock(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageEndingWith(length);
        }
        assertThat(residue(tooLong)).isEmpty();
        String longest = name + "z".repeat(Checks.MAX_NAME_LENGTH - name.length());
        DistributedLock lock = client.lock(longest);
        assertThat(lock.tryLock()).isTrue();
        assertThat(newClient().lock(longest).tryLock()).isFalse();
        lock.unlock();
        assertThat(residue(longest)).isEmpty();
    }

    @Test
    default void lease_zeroNegativeOrOverflowing_isRejectedWithItsValue() {
        DistributedLock lock = newClient().lock(uniqueName());
        assertThatThrownBy(() -> lock.lock(0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime")
                .hasMessageContaining("0");
        assertThatThrownBy(() -> lock.tryLock(1, -3, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime")
                .hasMessageContaining("-3");
        assertThatThrownBy(() -> lock.lock(Long.MAX_VALUE, TimeUnit.DAYS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease")
                .hasMessageContaining("PT-0.001S");
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    default void nullUnitOrDuration_isRejected() {
        DistributedLock lock = newClient().lock(uniqueName());
        assertThatThrownBy(() -> lock.tryLock(1, nullUnit())).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.lock(1, nullUnit())).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.tryAcquire(nullDuration())).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.tryAcquire(Duration.ZERO, nullDuration()))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> lock.addListener(nullOf())).isInstanceOf(NullPointerException.class);
    }

    @Test
    default void newCondition_isUnsupported() {
        DistributedLock lock = newClient().lock(uniqueName());
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    default void closedClient_rejectsNewLocks() {
        LockClient client = createClient(defaultLease());
        DistributedLock lock = client.lock(uniqueName());
        client.close();
        client.close();
        assertThatThrownBy(() -> client.lock("x")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(lock::tryLock).isInstanceOf(IllegalStateException.class);
    }

    @Test
    default void oddNames_workAsOrdinaryLocks() {
        LockClient a = newClient();
        LockClient b = newClient();
        String u = uniqueName();
        for (String name : new String[] {
            u + "{tag}",
            u + "}{",
            u + "/../..",
            u + "\n\r",
            u + "\"'`;--",
            u + " spaced ",
            u + "日本語✓",
            u + "*?[]",
            u + "%2F",
            "/" + u,
            u + "y".repeat(Checks.MAX_NAME_LENGTH - u.length())
        }) {
            DistributedLock lock = a.lock(name);
            assertThat(lock.tryLock()).isTrue();
            assertThat(b.lock(name).tryLock()).isFalse();
            assertThat(a.admin().inspect(name)).isPresent();
            lock.unlock();
            assertThat(residue(name)).isEmpty();
        }
    }

    private static String nullString() {
        return nullOf();
    }

    private static TimeUnit nullUnit() {
        return nullOf();
    }

    private static Duration nullDuration() {
        return nullOf();
    }

    @SuppressWarnings({"unchecked", "NullAway"})
    private static <T> T nullOf() {
        return (T) null;
    }
}
