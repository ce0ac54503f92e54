package com.example.jobs;

import io.distlock.DistributedLock;
import io.distlock.LockClient;
import io.distlock.LockHold;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/** A job that runs on at most one instance of the service at a time, whichever instance takes the lock. */
public final class NightlyJob {
    private final DistributedLock lock;
    private final Runnable work;

    public NightlyJob(LockClient locks, Runnable work) {
        this.lock = locks.lock("jobs:nightly");
        this.work = work;
    }

    /**
     * Runs the work if the lock can be taken within {@code wait}, and returns the fencing token of the run (what a
     * store the work writes to would check); empty when another instance held the lock all that time.
     */
    public OptionalLong run(Duration wait) throws InterruptedException {
        Optional<LockHold> taken = lock.tryAcquire(wait);
        if (taken.isEmpty()) {
            return OptionalLong.empty();
        }
        try (LockHold hold = taken.get()) {
            work.run();
            return OptionalLong.of(hold.fencingToken());
        }
    }
}
