package io.distlock.testkit;

import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A counter that protects itself with fencing tokens, as a database row or a storage service would: it accepts an
 * operation only with a token at least as high as the highest it has seen, raises that mark on reads as well as
 * writes, and refuses an equal token presented by a different acquisition (which only a store that issues duplicate
 * tokens can cause). It counts what it rejected.
 *
 * <p>The read-sleep-write counter over it ({@link CounterWorkload}) is the standard mutual-exclusion check: with a
 * correct lock, no write is rejected and no increment is lost.
 */
public final class FencedResource {
    private final ReentrantLock lock = new ReentrantLock();
    private long highestToken = Long.MIN_VALUE;
    private @Nullable Object highestAcquisition;
    private long value;
    private long acceptedWrites;
    private long rejected;

    /** The value, if {@code token} is not stale; a stale read is rejected and counted. */
    public OptionalLong read(long token, Object acquisition) {
        lock.lock();
        try {
            if (!admit(token, acquisition)) {
                return OptionalLong.empty();
            }
            return OptionalLong.of(value);
        } finally {
            lock.unlock();
        }
    }

    /** Writes {@code newValue} if {@code token} is not stale; returns whether the write was accepted. */
    public boolean write(long token, Object acquisition, long newValue) {
        lock.lock();
        try {
            if (!admit(token, acquisition)) {
                return false;
            }
            value = newValue;
            acceptedWrites++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    private boolean admit(long token, Object acquisition) {
        if (token < highestToken || (token == highestToken && acquisition != highestAcquisition)) {
            rejected++;
            return false;
        }
        highestToken = token;
        highestAcquisition = acquisition;
        return true;
    }

    public long value() {
        lock.lock();
        try {
            return value;
        } finally {
            lock.unlock();
        }
    }

    public long acceptedWrites() {
        lock.lock();
        try {
            return acceptedWrites;
        } finally {
            lock.unlock();
        }
    }

    /** Operations refused for a stale or duplicate token. */
    public long rejected() {
        lock.lock();
        try {
            return rejected;
        } finally {
            lock.unlock();
        }
    }

    public long highestToken() {
        lock.lock();
        try {
            return highestToken;
        } finally {
            lock.unlock();
        }
    }
}
