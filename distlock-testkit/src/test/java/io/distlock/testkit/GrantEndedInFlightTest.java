package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockClient;
import io.distlock.PermitHold;
import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import io.distlock.spi.ClaimStore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A claim whose grant comes back after its lease ended (a slow reply) is not returned as a hold that is lost at birth:
 * the engine gives it back to the store and tries again within the wait.
 */
class GrantEndedInFlightTest {
    private static final Duration LEASE = Duration.ofSeconds(1);

    private final InMemoryLockServer server = InMemoryLockServer.create();
    private final AtomicInteger attempts = new AtomicInteger();
    private final LockClient client = SyncStoreClients.client(
            server, Duration.ofSeconds(30), false, s -> new FirstGrantSlow(s, attempts), s -> s);

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void semaphoreGrant_whoseLeaseEndedInFlight_isGivenBack_andTheAcquireTriesAgain() throws Exception {
        Optional<PermitHold> hold = client.semaphore("s", 1).tryAcquire(1, Duration.ofSeconds(10), LEASE);
        assertThat(hold).as("acquired within the wait").isPresent();
        assertThat(hold.get().isValid()).as("the hold returned is valid").isTrue();
        assertThat(attempts).as("the slow grant, then a fresh one").hasValue(2);
        hold.get().release();
        assertThat(server.residue("s")).as("nothing left").isEmpty();
    }

    @Test
    void writeLockGrant_whoseLeaseEndedInFlight_withoutAWait_isGivenBack_andNothingIsAcquired() throws Exception {
        var hold = client.readWriteLock("rw").writeLock().tryAcquire(Duration.ZERO, LEASE);
        assertThat(hold).as("the only grant ended on its way back").isEmpty();
        assertThat(attempts).hasValue(1);
        assertThat(server.residue("rw")).as("the grant was given back").isEmpty();
    }

    /** Holds the answer of the first grant back until its lease has ended, as a slow network would. */
    private static final class FirstGrantSlow extends ForwardingClaimStore {
        private final AtomicInteger attempts;

        FirstGrantSlow(ClaimStore delegate, AtomicInteger attempts) {
            super(delegate);
            this.attempts = attempts;
        }

        @Override
        public Attempt tryAcquire(Claim claim, boolean queue) {
            Attempt answer = super.tryAcquire(claim, queue);
            if (attempts.incrementAndGet() == 1 && answer instanceof Attempt.Acquired) {
                try {
                    Thread.sleep(claim.lease().length().toMillis() + 50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return answer;
        }
    }
}
