package io.distlock.testkit;

/** The read-write lock, semaphore and latch contracts on clients in the mode of ZooKeeper and etcd. */
class InMemoryStrictQueueSynchronizersTest extends InMemorySynchronizersTest {
    @Override
    boolean strictQueue() {
        return true;
    }
}
