package com.example.counter;

import io.distlock.spring.DistributedLock;
import io.distlock.spring.FencingToken;
import java.time.LocalDate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The day's statistics, updated by read-modify-write under the day's lock. */
@Service
public class DailyStats {

    /** What an increment wrote: the day's new value and the fencing token it was written with. */
    public record Increment(LocalDate day, long increments, long token) {}

    private final DailyStatsTable table;

    public DailyStats(DailyStatsTable table) {
        this.table = table;
    }

    /**
     * Adds one to the day's row. The lock is the day's ({@code stats:2026-11-27}): every instance that counts the
     * same day waits for the others, whatever day the others count. The starter takes the lock before the transaction
     * begins and releases it after the transaction commits, so the next holder reads the committed value; the caller
     * passes any value for {@code token}, the advice puts the hold's fencing token in its place.
     *
     * @throws StaleTokenException if the write was refused: this hold was lost (its lease ran out while the instance
     *     was paused) and a later holder has written the row; the transaction rolls back
     */
    @DistributedLock(key = "'stats:' + #day")
    @Transactional
    public Increment increment(LocalDate day, @FencingToken long token) {
        var row = table.read(day);
        long next = row.map(DailyStatsTable.Row::increments).orElse(0L) + 1; // the seed's "various computations"
        boolean written = row.isPresent() ? table.update(day, next, token) : table.insert(day, next, token);
        if (!written) {
            throw new StaleTokenException(day, token);
        }
        return new Increment(day, next, token);
    }
}
