package io.distlock.testkit.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.testkit.history.ClientEvent.Type;
import io.distlock.testkit.history.NemesisEvent.Effect;
import io.distlock.testkit.history.PropertyResult.Status;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The checker passes a clean history and flags each planted violation: two overlapping holds, a token inversion, a
 * lost increment, an acknowledged write the resource never accepted, a slow takeover, a late loss report, and an
 * ordering only the linearizability check can see.
 */
class HistoryCheckerTest {
    private static final CheckOptions OPTIONS =
            CheckOptions.defaults().withTakeoverBound(Duration.ofSeconds(5)).withLossNoticeBound(Duration.ofSeconds(1));

    private static Histories twoCleanHolds() {
        return new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .check("c1", "a", 20, 1)
                .increment("c1", "a", 21, 40, 1)
                .check("c1", "a", 41, 1)
                .release("c1", "a", 50, 60, 1, Type.OK)
                .acquire("c2", "b", 5, 70, 2)
                .check("c2", "b", 80, 2)
                .increment("c2", "b", 81, 90, 2)
                .release("c2", "b", 100, 110, 2, Type.OK);
    }

    @Test
    void cleanHistory_passesEverySafetyProperty() {
        CheckReport report = HistoryChecker.check(twoCleanHolds().build(), OPTIONS);

        report.assertHolds(Property.values());
        assertThat(report.result(Property.S1).status()).isEqualTo(Status.PASS);
        assertThat(report.result(Property.S2).status()).isEqualTo(Status.PASS);
        assertThat(report.result(Property.S3).status()).isEqualTo(Status.PASS);
        assertThat(report.result(Property.S4).measure()).isZero();
        assertThat(report.result(Property.LIN).status()).isEqualTo(Status.PASS);
        assertThat(report.result(Property.L1).status()).isEqualTo(Status.NOT_APPLICABLE);
    }

    @Test
    void overlappingHolds_failS1AndLinearizability_withATimeline() {
        History h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .check("c1", "a", 50, 1) // c1 still believes at 50 ms...
                .acquire("c2", "b", 5, 30, 2) // ...but c2 got the lock at 30 ms
                .release("c2", "b", 60, 70, 2, Type.OK)
                .release("c1", "a", 80, 90, 1, Type.OK)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.failed(Property.S1)).isTrue();
        assertThat(report.failed(Property.LIN)).isTrue();
        Violation v = report.firstViolation(Property.S1).orElseThrow();
        assertThat(v.message())
                .contains("b (c2, token 2)")
                .contains("a (c1, token 1)")
                .contains("20 ms");
        String timeline = report.timeline(v);
        assertThat(timeline).contains("c2 acquire ok acq=b token=2").contains("c1 check ok acq=a");
        assertThatThrownBy(() -> report.assertHolds(Property.S1))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("properties failed: [S1]")
                .hasMessageContaining("timeline of S1");
    }

    @Test
    void tokenInversion_failsS2AndLinearizability() {
        History h = new Histories()
                .acquire("c1", "a", 0, 10, 5)
                .release("c1", "a", 20, 30, 5, Type.OK)
                .acquire("c2", "b", 40, 50, 4) // began after token 5 was issued, got a smaller one
                .release("c2", "b", 60, 70, 4, Type.OK)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.failed(Property.S2)).isTrue();
        assertThat(report.firstViolation(Property.S2).orElseThrow().message())
                .contains("got token 4 though a (c1) had got token 5");
        assertThat(report.failed(Property.S1)).isFalse();
        assertThat(report.failed(Property.LIN)).isTrue();
    }

    @Test
    void duplicateToken_failsS2() {
        History h = new Histories()
                .acquire("c1", "a", 0, 10, 3)
                .acquire("c2", "b", 5, 15, 3)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.result(Property.S2).violations())
                .anySatisfy(v -> assertThat(v.message()).contains("token 3 issued twice"));
        assertThat(report.result(Property.S2).summary()).isEqualTo("0 out-of-order tokens, 1 tokens issued twice");
    }

    @Test
    void lostIncrement_failsS3_andCountsTheRawOverlap() {
        // an unfenced resource: both read 0, both write 1; one increment is lost
        History h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .acquire("c2", "b", 0, 12, 2)
                .unfenced(20, "c1", "a", 1, false, 0)
                .unfenced(21, "c2", "b", 2, false, 0)
                .unfenced(30, "c1", "a", 1, true, 1)
                .unfenced(31, "c2", "b", 2, true, 1)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.failed(Property.S3)).isTrue();
        assertThat(report.result(Property.S3).violations())
                .anySatisfy(v -> assertThat(v.message()).contains("lost increment"));
        assertThat(report.result(Property.S4).measure()).isEqualTo(1L);
    }

    @Test
    void acknowledgedWriteMissingAtTheResource_failsS3() {
        History h = twoCleanHolds()
                .event(95, "c2", "b", ClientEvent.Op.WRITE, Type.OK, 2L, 7L) // the client saw an ack nobody gave
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.result(Property.S3).violations())
                .anySatisfy(v -> assertThat(v.message()).contains("acknowledged to the client but not accepted"));
    }

    @Test
    void writeOfAProcessKilledBeforeItsAnswer_isAnUnknownOutcome() {
        History h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .killedAfterWriting("c1", "a", 20, 30, 1)
                .acquire("c2", "b", 3000, 3010, 2)
                .increment("c2", "b", 3020, 3030, 2)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.result(Property.S3).status())
                .as("final value 2: one acknowledged write and one that may or may not have happened")
                .isEqualTo(Status.PASS);
    }

    @Test
    void holdThatExpiredBeforeItsAnswerArrived_isLinearizable() {
        // c1's grant (token 1) reached it only after its lease had run out and c2 had taken token 2: c1's first check
        // finds the hold invalid, and the loss is reported
        History h = new Histories()
                .event(0, "c1", "a", ClientEvent.Op.ACQUIRE, Type.INVOKE, null, null)
                .acquire("c2", "b", 100, 2_000, 2)
                .release("c2", "b", 2_100, 2_110, 2, Type.OK)
                .event(3_000, "c1", "a", ClientEvent.Op.ACQUIRE, Type.OK, 1L, null)
                .event(3_001, "c1", "a", ClientEvent.Op.CHECK, Type.FAIL, 1L, null)
                .lost("c1", "a", 3_020, 1)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        report.assertHolds(Property.S1, Property.S2, Property.LIN);
    }

    @Test
    void staleWriteRefusedByTheFence_keepsS3() {
        History h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .acquire("c2", "b", 0, 500, 2)
                .increment("c2", "b", 510, 520, 2)
                .increment("c1", "a", 530, 540, 1) // a paused holder wakes up: refused
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.result(Property.S3).status()).isEqualTo(Status.PASS);
        assertThat(report.result(Property.S3).measure()).isEqualTo(2L); // its read and its write
    }

    @Test
    void takeover_withinAndBeyondTheBound() {
        Histories within = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .acquire("c2", "b", 5, 3_000, 2)
                .fault(100, 100, "kill", "c1", Effect.HOLDER_DOWN);
        Histories beyond = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .acquire("c2", "b", 5, 9_000, 2)
                .fault(100, 100, "kill", "c1", Effect.HOLDER_DOWN);

        PropertyResult ok = HistoryChecker.check(within.build(), OPTIONS).result(Property.L1);
        PropertyResult slow = HistoryChecker.check(beyond.build(), OPTIONS).result(Property.L1);

        assertThat(ok.status()).isEqualTo(Status.PASS);
        assertThat(ok.measure()).isEqualTo(2_900L);
        assertThat(slow.status()).isEqualTo(Status.FAIL);
        assertThat(slow.violations().get(0).message()).contains("8900 ms");
    }

    @Test
    void takeover_grantedBeforeTheFaultsEntry_countsAsImmediate_notAsAnotherDownedHolder() {
        // c1 is killed while holding; its connection closes at once and c2 is granted before the kill's entry is
        // written
        Histories h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .acquire("c2", "b", 5, 99, 2)
                .acquire("c2", "c", 200, 9_000, 3)
                .fault(100, 100, "kill", "c1", Effect.HOLDER_DOWN);

        PropertyResult l1 = HistoryChecker.check(h.build(), OPTIONS).result(Property.L1);

        assertThat(l1.status()).isEqualTo(Status.PASS);
        assertThat(l1.measure()).isZero();
    }

    @Test
    void faultOnAClientThatHadBegunItsRelease_isNotJudgedAsATakeover() {
        // c1 began its release, c2 took the lock, then c1 was killed: the kill hit no holder; c3's later grant is no
        // takeover of c2's hold
        Histories h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .release("c1", "a", 50, 60, 1, Type.OK)
                .acquire("c2", "b", 5, 70, 2)
                .acquire("c3", "c", 20, 9_000, 3)
                .fault(100, 100, "kill", "c1", Effect.HOLDER_DOWN);

        PropertyResult l1 = HistoryChecker.check(h.build(), OPTIONS).result(Property.L1);

        assertThat(l1.status()).isEqualTo(Status.NOT_APPLICABLE);
    }

    @Test
    void takeover_afterAProxyFaultOfTheHolder_isJudgedForThatClient() {
        Histories h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .acquire("c2", "b", 5, 3_000, 2)
                .fault(100, 2_000, "blackhole", "c1->6379", Effect.HOLDER_DOWN);

        PropertyResult l1 = HistoryChecker.check(h.build(), OPTIONS).result(Property.L1);

        assertThat(l1.status()).isEqualTo(Status.PASS);
        assertThat(l1.measure()).isEqualTo(2_900L);
    }

    @Test
    void takeover_holdOfAnotherProcessFromBeforeTheDownedHold_isNoTakeover() {
        // c2's hold began before c1's and never ended: it is not what c1's kill let in
        Histories h = new Histories()
                .acquire("c2", "b", 0, 5, 2)
                .acquire("c1", "a", 0, 10, 1)
                .acquire("c3", "c", 20, 9_000, 3)
                .fault(100, 100, "kill", "c1", Effect.HOLDER_DOWN);

        PropertyResult l1 = HistoryChecker.check(h.build(), OPTIONS).result(Property.L1);

        assertThat(l1.status()).isEqualTo(Status.FAIL);
        assertThat(l1.violations().get(0).message()).contains("8900 ms");
    }

    @Test
    void lossReport_withinAndBeyondTheBound() {
        Histories quick = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .fault(100, 110, "delete-hold", "store", Effect.HOLD_REMOVED)
                .lost("c1", "a", 600, 1)
                .check("c1", "a", 2_000, 1);
        Histories late = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .fault(100, 110, "delete-hold", "store", Effect.HOLD_REMOVED)
                .lost("c1", "a", 2_600, 1);
        Histories claimedOk = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .fault(100, 110, "delete-hold", "store", Effect.HOLD_REMOVED)
                .release("c1", "a", 300, 310, 1, Type.OK);

        CheckReport q = HistoryChecker.check(quick.build(), OPTIONS);
        assertThat(q.result(Property.L5).status()).isEqualTo(Status.PASS);
        assertThat(q.result(Property.L5).measure()).isEqualTo(500L);
        // believing in the hold again after the loss was reported breaks S1
        assertThat(q.result(Property.S1).violations())
                .anySatisfy(v -> assertThat(v.message()).contains("reported valid after it was reported lost"));
        assertThat(HistoryChecker.check(late.build(), OPTIONS).failed(Property.L5))
                .isTrue();
        assertThat(HistoryChecker.check(claimedOk.build(), OPTIONS)
                        .result(Property.L5)
                        .violations())
                .anySatisfy(v -> assertThat(v.message()).contains("released ok a hold that delete-hold had removed"));
    }

    /**
     * The shape of docs/safety.md finding 15: c1's hold is told lost, the store keeps it for nobody, and c2's acquires
     * answer busy for 8.65 s; no fault is in force.
     */
    private static Histories grantKeptForNobody(long busyUntil) {
        Histories h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .check("c1", "a", 20, 1)
                .lost("c1", "a", 500, 1)
                .release("c1", "a", 600, 700, 1, Type.FAIL);
        long t = 100;
        int n = 0;
        while (t + 1000 <= busyUntil) {
            h.busy("c2", "w" + n++, t, t + 1000);
            t += 1000;
        }
        return h.acquire("c2", "b", t, t + 50, 2).release("c2", "b", t + 100, t + 110, 2, Type.OK);
    }

    @Test
    void keyHeldByNobodyWhileAskedFor_failsL6_withWhoAskedAndTheLastHold() {
        CheckReport report =
                HistoryChecker.check(grantKeptForNobody(9100).build(), OPTIONS.withIdleBound(Duration.ofSeconds(5)));

        assertThat(report.failed(Property.L6)).isTrue();
        Violation v = report.firstViolation(Property.L6).orElseThrow();
        assertThat(v.message())
                .contains("held by nobody for 8650 ms")
                .contains("c2 (10 attempts)")
                .contains("a (c1), believed until");
        assertThat(report.result(Property.L6).measure()).isEqualTo(8650L);
        // safety is untouched: only L6 sees it
        report.assertHolds(Property.S1, Property.S2, Property.S3, Property.LIN, Property.L3);
    }

    @Test
    void shortHandOffs_andAGrantLeftBehindByAFault_passL6() {
        // the same 8.65 s idle stretch, but inside a fault's window (a kill of c1's connection) plus the bound after it
        History inFault = grantKeptForNobody(9100)
                .fault(400, 4000, "blackhole", "c1->5432", Effect.NONE)
                .build();
        CheckReport faulted = HistoryChecker.check(inFault, OPTIONS.withIdleBound(Duration.ofSeconds(5)));
        assertThat(faulted.result(Property.L6).status()).isEqualTo(Status.PASS);

        // hand-offs of a few milliseconds, an idle stretch of 2.65 s below the bound
        CheckReport clean =
                HistoryChecker.check(grantKeptForNobody(3100).build(), OPTIONS.withIdleBound(Duration.ofSeconds(5)));
        assertThat(clean.result(Property.L6).status()).isEqualTo(Status.PASS);
        assertThat(clean.result(Property.L6).measure()).isEqualTo(2650L);

        // nobody asked while the key was free
        CheckReport nobodyAsked = HistoryChecker.check(twoCleanHolds().build(), OPTIONS);
        assertThat(nobodyAsked.result(Property.L6).status()).isEqualTo(Status.PASS);
    }

    @Test
    void releaseAnsweredOkAfterAnotherOwnerGotTheLock_isCaughtOnlyByLinearizability() {
        // c1's last check was at 20 ms, so S1 sees no overlap with c2's hold from 40 ms; but the store answered c1's
        // release at 100 ms "ok", so c1's hold was still there while c2 held the lock
        History h = new Histories()
                .acquire("c1", "a", 0, 10, 1)
                .check("c1", "a", 20, 1)
                .acquire("c2", "b", 30, 40, 2)
                .release("c2", "b", 50, 60, 2, Type.OK)
                .release("c1", "a", 100, 110, 1, Type.OK)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        assertThat(report.failed(Property.S1)).isFalse();
        assertThat(report.failed(Property.S2)).isFalse();
        assertThat(report.failed(Property.LIN)).isTrue();
    }

    @Test
    void unknownOutcomes_mayOrMayNotHaveHappened() {
        // c1's acquire timed out (info) and c1 died; c2 got the lock later: linearizable (c1's grant may have ended)
        History h = new Histories()
                .event(0, "c1", "a", ClientEvent.Op.ACQUIRE, Type.INVOKE, null, null)
                .event(100, "c1", "a", ClientEvent.Op.ACQUIRE, Type.INFO, null, null)
                .acquire("c2", "b", 50, 200, 7)
                .release("c2", "b", 300, 310, 7, Type.OK)
                .acquire("c3", "c", 320, 330, 8)
                .build();

        CheckReport report = HistoryChecker.check(h, OPTIONS);

        report.assertHolds(Property.S1, Property.S2, Property.LIN);
    }

    @Test
    void linearizability_givesUpAtItsCap() {
        // thousands of unknown acquires make a long search; with no time at all it answers unknown, with time it
        // decides
        Histories h = new Histories();
        for (int i = 0; i < 3000; i++) {
            h.event(i, "c" + i, "x" + i, ClientEvent.Op.ACQUIRE, Type.INVOKE, null, null);
            h.event(i + 1, "c" + i, "x" + i, ClientEvent.Op.ACQUIRE, Type.INFO, null, null);
        }
        h.acquire("z", "z", 0, 50_000, 1).release("z", "z", 50_001, 50_002, 1, Type.OK);

        History history = h.build();

        assertThat(HistoryChecker.check(history, OPTIONS.withLinearizabilityCap(Duration.ZERO))
                        .result(Property.LIN)
                        .status())
                .isEqualTo(Status.UNKNOWN);
        assertThat(HistoryChecker.check(history, OPTIONS).result(Property.LIN).status())
                .isEqualTo(Status.PASS);
    }
}
