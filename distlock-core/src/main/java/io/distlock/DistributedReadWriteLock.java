package io.distlock;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * A read-write lock shared by every process that uses the same name on the same store: many readers or one writer.
 *
 * <p>Both views are {@link DistributedLock}s with the whole lock contract: owned by a thread (re-entrant) or by a
 * {@link LockHold}, leases renewed by the watchdog or fixed, fencing tokens, listeners, lost holds told at once.
 *
 * <ul>
 *   <li><b>Leases per hold.</b> Every read hold and every write hold has a lease of its own: a reader whose process
 *       died loses its hold within one lease, even while other readers keep renewing theirs.
 *   <li><b>Writer preference.</b> A waiting writer blocks readers that arrive after it, so a stream of readers cannot
 *       starve writers. A write release lets in every waiting reader, or the next writer; the last read release lets in
 *       one writer.
 *   <li><b>Downgrade, not upgrade.</b> A thread that holds the write lock may take the read lock (then release the
 *       write lock: a downgrade). A thread that holds only the read lock and asks for the write lock gets {@link
 *       IllegalMonitorStateException} at once: it would wait for itself for ever.
 *   <li><b>Fencing.</b> Read and write holds take their tokens from one counter per name: every write hold's token is
 *       greater than every token issued before for the name.
 * </ul>
 *
 * <pre>{@code
 * DistributedReadWriteLock rw = client.readWriteLock("doc:7");
 * try (LockHold read = rw.readLock().acquire()) {
 *     render(store.load("doc:7"));
 * }
 * }</pre>
 */
public interface DistributedReadWriteLock extends ReadWriteLock {

    /** The name, as given to the client. */
    String name();

    /** The shared view: many owners at once, none while a writer holds or waits. */
    @Override
    DistributedLock readLock();

    /** The exclusive view: one owner, no readers. */
    @Override
    DistributedLock writeLock();
}
