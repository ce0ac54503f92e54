/**
 * Histories of lock clients under faults, and the checker that judges them.
 *
 * <p>Each client process appends its acquire, check, read, write, release and loss events to a JSONL file of its own
 * through a {@link io.distlock.testkit.history.HistoryWriter} (one {@code write()} per line, monotonic {@link
 * System#nanoTime()} timestamps, which all JVMs of one Linux machine share); {@link
 * io.distlock.testkit.history.RecordedLock} does it for a {@link io.distlock.DistributedLock}. The {@link
 * io.distlock.testkit.history.FencedResourceServer}, a fenced counter reached over TCP, logs every request it accepted
 * or refused; fault injectors log when each fault starts and ends. {@link io.distlock.testkit.history.History} reads
 * a directory of such files back, and {@link io.distlock.testkit.history.HistoryChecker} computes the safety
 * properties S1 to S4, the liveness properties L1, L3, L4 and L5, and a per-key linearizability check of the
 * fenced-mutex model, printing the first violating window as a timeline.
 */
@NullMarked
package io.distlock.testkit.history;

import org.jspecify.annotations.NullMarked;
