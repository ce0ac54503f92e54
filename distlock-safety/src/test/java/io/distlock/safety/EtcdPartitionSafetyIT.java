package io.distlock.safety;

/** {@link PartitionSafetyTests} on an etcd cluster of 3 (E6, E6-leader). */
class EtcdPartitionSafetyIT extends PartitionSafetyTests {
    EtcdPartitionSafetyIT() {
        super(PartitionStores.Etcd::new);
    }
}
