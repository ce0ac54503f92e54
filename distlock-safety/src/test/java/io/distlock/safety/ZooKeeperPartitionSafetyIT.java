package io.distlock.safety;

/** {@link PartitionSafetyTests} on a ZooKeeper ensemble of 3 (Z3, Z3-leader). */
class ZooKeeperPartitionSafetyIT extends PartitionSafetyTests {
    ZooKeeperPartitionSafetyIT() {
        super(PartitionStores.ZooKeeper::new);
    }
}
