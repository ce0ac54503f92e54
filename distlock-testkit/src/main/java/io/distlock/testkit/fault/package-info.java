/**
 * Faults to inject between lock clients and their stores, for distlock's safety suite and for users' own tests.
 *
 * <p>Three kinds, each bounded in time and undone by itself:
 *
 * <ul>
 *   <li>network faults, through a {@link io.distlock.testkit.fault.FaultProxy} on loopback between a client and its
 *       store: delay and jitter, a blackhole that sends no FIN, resets, a half-open connection, "forward the request,
 *       drop the reply, close", and a cut after N bytes;
 *   <li>process faults, through {@link io.distlock.testkit.fault.ProcessFaults}, for the servers the testkit launches
 *       ({@link io.distlock.testkit.server}) and for any process by pid: pause (SIGSTOP, then SIGCONT), kill -9,
 *       restart with or without the data, delayed restart;
 *   <li>store faults, through {@link io.distlock.testkit.fault.StoreFaults}: delete a hold, expire a ZooKeeper
 *       session, revoke an etcd lease, kill a database session, fail a Redis master over.
 * </ul>
 *
 * <p>Every fault is a {@link io.distlock.testkit.fault.Fault}: it starts when made, heals when its duration passes
 * (or at {@link io.distlock.testkit.fault.Fault#close()}, whichever comes first), and tells a {@link
 * io.distlock.testkit.fault.FaultLog} when it starts and ends, so a history can place it on its timeline.
 */
@NullMarked
package io.distlock.testkit.fault;

import org.jspecify.annotations.NullMarked;
