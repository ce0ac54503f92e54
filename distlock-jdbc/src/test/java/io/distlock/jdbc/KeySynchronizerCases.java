package io.distlock.jdbc;

import io.distlock.LockClient;
import io.distlock.testkit.AllSynchronizerContracts;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The synchronizer contract cases that depend on what differs between databases (the clock and sequence SQL, row
 * locking, deadlock and duplicate-key handling, and waking by NOTIFY or by polling), for the databases that do not
 * run every case: {@link TableSynchronizersPostgresIT} runs them all on the same SQL.
 */
abstract class KeySynchronizerCases extends GrantsFixture implements LatchCallIds {

    /** The contracts, run on this fixture's database through explicit cases below. */
    private final AllSynchronizerContracts suite = new AllSynchronizerContracts() {
        @Override
        public LockClient createClient(Duration watchdogLease) {
            return KeySynchronizerCases.this.createClient(watchdogLease);
        }

        @Override
        public void expireHold(String name) {
            KeySynchronizerCases.this.expireHold(name);
        }

        @Override
        public List<String> residue(String name) {
            return KeySynchronizerCases.this.residue(name);
        }
    };

    @AfterEach
    void closeSuiteClients() {
        suite.closeTrackedClients();
    }

    @Test
    void readWrite_fencedWorkload() {
        suite.fencedWorkload_writersAndReaders_noLostIncrements_noWriteDuringARead();
    }

    @Test
    void readWrite_waitingWriterBlocksLaterReaders() throws Exception {
        suite.waitingWriter_blocksReadersThatArriveAfterIt();
    }

    @Test
    void readWrite_writeReleaseLetsEveryReaderIn() throws Exception {
        suite.writeRelease_letsEveryWaitingReaderIn();
    }

    @Test
    void readWrite_downgrade() {
        suite.downgrade_writeThenRead_thenWriteRelease_keepsTheReadHold();
    }

    @Test
    void readWrite_readLeaseEnds() throws Exception {
        suite.readHold_withEndedLease_isGone_whileAnotherReaderRenews();
    }

    @Test
    void readWrite_tokens() throws Exception {
        suite.writeTokens_exceedEveryTokenBefore_readTokensFromTheSameCounter();
    }

    @Test
    void readWrite_writerTimesOut() throws Exception {
        suite.writerTimesOut_leavesNothing_readersGetInAtOnce();
    }

    @Test
    void semaphore_acrossClients() {
        suite.tryAcquire_upToTheSize_acrossClients_thenNoMore();
    }

    @Test
    void semaphore_concurrentHolders() {
        suite.concurrentHolders_neverHoldMoreThanTheSize();
    }

    @Test
    void semaphore_largeAcquireNotStarved() throws Exception {
        suite.acquireOfAllPermits_notStarvedByAStreamOfSingleAcquires();
    }

    @Test
    void semaphore_otherSize() {
        suite.otherSize_throwsIllegalStateNamingBothSizes_andChangesNothing();
    }

    @Test
    void semaphore_otherKind() {
        suite.nameInUseAsReadWriteLock_refusesTheSemaphore_andKeepsTheLock();
    }

    @Test
    void semaphore_fixedLeaseEnds() throws Exception {
        suite.fixedLeaseHold_ends_andItsPermitsComeBack();
    }

    @Test
    void semaphore_removedBehindItsBack() throws Exception {
        suite.holdRemovedBehindItsBack_isToldLost_releaseThrowsLockLost_permitsFree();
    }

    @Test
    void latch_setOnlyWhenAbsentOrZero() {
        suite.trySetCount_onlyWhenAbsentOrAtZero();
    }

    @Test
    void latch_countDownsOfManyClients() throws Exception {
        suite.countDowns_ofManyThreadsAndClients_eachCountOnce();
    }

    @Test
    void latch_zeroWakesEveryWaiter() throws Exception {
        suite.reachingZero_wakesEveryWaiterOfEveryClient_promptly();
    }

    @Test
    void latch_otherKind() {
        suite.nameInUseAsAnotherKind_isRefused_andNothingIsCorrupted();
    }
}
