package io.distlock.safety;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The client-fault and scale scenarios of {@link ClientFaultScenarios} (X4, X2, X6, G10, G10k; tier 2), for a backend's
 * safety IT to run on its store: the IT implements {@link #clientFaultStore()}.
 */
interface ClientFaultTests {

    /** The store the scenarios run on (started by the IT before its tests). */
    Store clientFaultStore();

    @Test
    @Tag("tier2")
    default void x4_holderSigterm() throws Exception {
        ClientFaultScenarios.x4HolderSigterm(clientFaultStore(), SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    default void x2_holderThreadDies() throws Exception {
        ClientFaultScenarios.x2ThreadDies(clientFaultStore(), SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    default void x6_closedUnderLoad() throws Exception {
        ClientFaultScenarios.x6UseAfterClose(clientFaultStore(), SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    default void g10_fiveHundredWaiters() throws Exception {
        ClientFaultScenarios.g10Waiters(clientFaultStore(), SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    default void g10_tenThousandKeys() throws Exception {
        ClientFaultScenarios.g10Keys(clientFaultStore(), SafetySeeds.seed());
    }
}
