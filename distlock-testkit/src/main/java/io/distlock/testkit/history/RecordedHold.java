package io.distlock.testkit.history;

import io.distlock.DistributedLockException;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.testkit.history.ClientEvent.Op;

/**
 * A hold taken through a {@link RecordedLock}. Its acquisition id and token go with every request to the fenced
 * resource; {@link #check()} records the library's belief before the holder acts on it, which is what the checker's
 * S1 property is about.
 */
public final class RecordedHold {
    private final RecordedLock lock;
    private final LockHold hold;
    private final String acq;

    RecordedHold(RecordedLock lock, LockHold hold, String acq) {
        this.lock = lock;
        this.hold = hold;
        this.acq = acq;
    }

    public String key() {
        return lock.name();
    }

    /** The acquisition id, unique across processes of one run. */
    public String acq() {
        return acq;
    }

    public long token() {
        return hold.fencingToken();
    }

    public LockHold hold() {
        return hold;
    }

    public HistoryWriter history() {
        return lock.history();
    }

    /**
     * Asks the library whether the hold is still valid, and records the answer ({@code check ok} or {@code check
     * fail}). Call it right before acting under the hold: a {@code check ok} is a moment the client believed it held
     * the lock.
     */
    public boolean check() {
        boolean valid = hold.isValid();
        history()
                .client(
                        key(),
                        acq,
                        history().nextOp(),
                        Op.CHECK,
                        valid ? ClientEvent.Type.OK : ClientEvent.Type.FAIL,
                        token(),
                        null,
                        null);
        return valid;
    }

    /**
     * Releases the hold, recorded: {@code ok}; {@code fail} when the library answers that the hold was lost (or not
     * held); {@code info} when the store could not be reached (the hold then ends with its lease).
     *
     * @return whether the release succeeded
     */
    public boolean release() {
        HistoryWriter h = history();
        long op = h.nextOp();
        h.client(key(), acq, op, Op.RELEASE, ClientEvent.Type.INVOKE, token(), null, null);
        try {
            hold.release();
            h.client(key(), acq, op, Op.RELEASE, ClientEvent.Type.OK, token(), null, null);
            return true;
        } catch (LockLostException e) {
            h.client(key(), acq, op, Op.RELEASE, ClientEvent.Type.FAIL, token(), null, "lost");
            return false;
        } catch (IllegalMonitorStateException e) {
            h.client(key(), acq, op, Op.RELEASE, ClientEvent.Type.FAIL, token(), null, "not held: " + e.getMessage());
            return false;
        } catch (DistributedLockException e) {
            h.client(key(), acq, op, Op.RELEASE, ClientEvent.Type.INFO, token(), null, e.toString());
            return false;
        }
    }
}
