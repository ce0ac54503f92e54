package io.distlock.spi;

/**
 * A {@link ClaimStore} whose holds are queue positions (ZooKeeper's sequential nodes, etcd's revisions): a waiting
 * attempt always queues, also for a non-fair lock, and the store's queue is the order between clients. Without {@link
 * HandsOff} every waiting owner of the client is in the queue; with it, the waiters of a non-fair lock in one client
 * line up behind the first, which alone keeps a place in the store's queue, and a release hands the lock to the first
 * local waiter ({@link HandsOff#handOff} may answer {@link HandOff#queued()}); a fair lock still queues every waiter.
 */
public interface QueueOrdered {}
