/**
 * The ZooKeeper backend of distlock: {@link io.distlock.zookeeper.ZooKeeperLockClient} over Apache Curator.
 *
 * <p>Each lock name is a container node whose children are the queue of owners that hold or wait, as ephemeral
 * sequential nodes; the first holds the lock, and its {@code czxid} (times 16, plus the local succession's number)
 * is the fencing token. Everything but the client class is package-private: the store that performs the atomic steps
 * (a coordinator, {@code ZooKeeperLockStore}, over one class per job: session watching, queue mirrors, acquire,
 * release, hand-off, renew and admin), and the encoding of names into path components.
 */
@NullMarked
package io.distlock.zookeeper;

import org.jspecify.annotations.NullMarked;
