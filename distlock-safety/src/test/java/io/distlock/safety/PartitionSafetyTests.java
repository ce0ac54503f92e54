package io.distlock.safety;

import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Partitions between servers of a 3-member store whose members each run in a network namespace of their own (tier 2;
 * skipped unless this JVM runs as root with {@code ip netns}): a member cut off from the others and from every client,
 * both ways or one way only, the leader or the holder's server; one link between the leader and a follower; a member
 * cut off from the other members while every client still reaches it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class PartitionSafetyTests {
    private final Supplier<? extends PartitionStores.Partitioned> make;
    private PartitionStores.Partitioned store;

    PartitionSafetyTests(Supplier<? extends PartitionStores.Partitioned> make) {
        this.make = make;
    }

    @BeforeAll
    void start() {
        NetNamespaces.assumeAvailable();
        store = make.get();
    }

    @AfterAll
    void stop() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    @Tag("tier2")
    void holdersServerCutOff() throws Exception {
        PartitionScenarios.memberCutOff(store, SafetySeeds.seed(), false);
    }

    @Test
    @Tag("tier2")
    void leaderCutOff() throws Exception {
        PartitionScenarios.memberCutOff(store, SafetySeeds.seed(), true);
    }

    @Test
    @Tag("tier2")
    void holdersServerCannotReceive() throws Exception {
        PartitionScenarios.cutOneWay(store, SafetySeeds.seed(), NetNamespaces.Way.IN, false);
    }

    @Test
    @Tag("tier2")
    void holdersServerCannotSend() throws Exception {
        PartitionScenarios.cutOneWay(store, SafetySeeds.seed(), NetNamespaces.Way.OUT, false);
    }

    @Test
    @Tag("tier2")
    void leaderCannotReceive() throws Exception {
        PartitionScenarios.cutOneWay(store, SafetySeeds.seed(), NetNamespaces.Way.IN, true);
    }

    @Test
    @Tag("tier2")
    void leaderCannotSend() throws Exception {
        PartitionScenarios.cutOneWay(store, SafetySeeds.seed(), NetNamespaces.Way.OUT, true);
    }

    @Test
    @Tag("tier2")
    void linkBetweenLeaderAndFollowerCut() throws Exception {
        PartitionScenarios.linkCut(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void holdersServerInTheMinority_clientsStillReachIt() throws Exception {
        PartitionScenarios.minorityWithClients(store, SafetySeeds.seed());
    }

    @Test
    @Tag("tier2")
    void holdersServerInTheMinority_holderReachesOnlyIt() throws Exception {
        PartitionScenarios.minorityWithHolderStuck(store, SafetySeeds.seed());
    }
}
