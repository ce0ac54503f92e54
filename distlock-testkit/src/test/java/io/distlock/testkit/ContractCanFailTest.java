package io.distlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.discovery.MethodSelector;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * Shows the contract suite is able to fail: each broken store is run through the contract tests that target its
 * defect, and every one of them must fail. The same tests pass on the correct store ({@link
 * InMemoryLockClientTest}).
 */
class ContractCanFailTest {

    static List<Arguments> variants() {
        return List.of(
                Arguments.of(
                        ReleaseWithoutOwnerCheckVariant.class,
                        List.of(
                                "release_afterHoldTakenOver_throwsLockLost_keepsNewHolder",
                                "release_missingHold_leavesNothingBehind")),
                Arguments.of(
                        NoFencingVariant.class,
                        List.of(
                                "tokens_increaseAcrossClientsAndAcquisitions",
                                "token_increasesAfterHoldExpired",
                                "pausedHolder_staleWriteIsRejected",
                                "tokens_increaseAcrossThreadsOfOneClient")),
                Arguments.of(LostWakeUpVariant.class, List.of("lock_waitsForRelease_andWakesPromptly")),
                Arguments.of(RenewalAfterReleaseVariant.class, List.of("renewal_afterRelease_neverExtendsTheNextHold")),
                Arguments.of(RenewalWithoutOwnerCheckVariant.class, List.of("renewal_neverExtendsAnotherOwnersHold")),
                Arguments.of(
                        TimeoutLeavesWaiterVariant.class,
                        List.of(
                                "fairTryLock_timesOut_leavesNoQueueEntry",
                                "fairLockInterruptibly_interrupted_throws_leavesNothing")),
                Arguments.of(
                        BrokenSyncVariants.WriterBesideReadersVariant.class,
                        List.of(
                                "readLock_readersOfSeveralClientsAndThreads_holdAtOnce",
                                "lastReadRelease_letsAWaitingWriterIn",
                                "waitingWriter_blocksReadersThatArriveAfterIt",
                                "fencedWorkload_writersAndReaders_noLostIncrements_noWriteDuringARead")),
                Arguments.of(
                        BrokenSyncVariants.ReaderPastWaitingWriterVariant.class,
                        List.of("waitingWriter_blocksReadersThatArriveAfterIt")),
                Arguments.of(
                        BrokenSyncVariants.PermitsWithoutLeasesVariant.class,
                        List.of("fixedLeaseHold_ends_andItsPermitsComeBack")),
                Arguments.of(
                        BrokenSyncVariants.MoreThanTheSizeVariant.class,
                        List.of(
                                "tryAcquire_upToTheSize_acrossClients_thenNoMore",
                                "concurrentHolders_neverHoldMoreThanTheSize")),
                Arguments.of(
                        BrokenSyncVariants.LatchLosesTheZeroWakeUpVariant.class,
                        List.of("reachingZero_wakesEveryWaiterOfEveryClient_promptly")),
                Arguments.of(
                        BrokenSyncVariants.CountDownCountedTwiceVariant.class,
                        List.of("countDown_replyLostAndRetried_countsOnce")),
                Arguments.of(
                        AsyncVariants.CancelLeavesQueueEntryVariant.class,
                        List.of(
                                "fairCancel_whileWaiting_leavesNoQueueEntry",
                                "completedFromOutside_orTimeout_leavesNothing")),
                Arguments.of(
                        AsyncVariants.CancelNotPropagatedVariant.class,
                        List.of(
                                "cancel_racingAGrant_leavesNoOrphanedHold",
                                "cancel_whileWaiting_leavesNothing",
                                "fairCancel_whileWaiting_leavesNoQueueEntry")),
                Arguments.of(
                        AsyncVariants.ThreadPerWaiterVariant.class,
                        List.of(
                                "manyAsyncAcquisitions_completeOnABoundedNumberOfThreads",
                                "acquireAsync_waits_completesOnRelease_onTheClientsExecutor")),
                Arguments.of(
                        BrokenSyncVariants.PermitsWithoutLeasesAsLockVariant.class,
                        List.of(
                                "fixedLease_endsWithoutRenewal_andUnlockThrowsLockLost",
                                "waiter_holderNeverReleases_acquiresAfterTheLease")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void brokenStore_failsTheContractTestsForItsDefect(Class<?> variant, List<String> methods) {
        MethodSelector[] selectors =
                methods.stream().map(m -> selectMethod(variant, m)).toArray(MethodSelector[]::new);
        Events tests = EngineTestKit.engine("junit-jupiter")
                .selectors(selectors)
                .execute()
                .testEvents();
        List<String> failed = tests.failed().stream()
                .map(e -> e.getTestDescriptor().getDisplayName().replace("()", ""))
                .collect(Collectors.toList());
        assertThat(tests.started().count()).as("tests started").isEqualTo(methods.size());
        assertThat(failed)
                .as(
                        "%s must fail each of %s; passed: %s",
                        variant.getSimpleName(),
                        methods,
                        Arrays.toString(tests.succeeded().stream()
                                .map(e -> e.getTestDescriptor().getDisplayName())
                                .toArray()))
                .containsExactlyInAnyOrderElementsOf(methods);
    }
}
