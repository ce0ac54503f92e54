package com.example.counter;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.LocalDate;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The scheduled job of every instance: counts one more for today, every {@code counter.interval}. The counts are
 * also meters ({@code stats_increments_total{outcome="committed"|"refused"}} on {@code /actuator/prometheus}).
 */
@Component
public class StatsJob {
    private static final Logger log = LoggerFactory.getLogger(StatsJob.class);

    private final DailyStats stats;
    private final Clock clock;
    private final Counter committed;
    private final Counter refused;
    private final ReentrantLock running = new ReentrantLock();
    private volatile boolean stopped;

    public StatsJob(DailyStats stats, Clock clock, MeterRegistry meters) {
        this.stats = stats;
        this.clock = clock;
        this.committed = Counter.builder("stats.increments")
                .tag("outcome", "committed")
                .description("increments of daily_stats this instance committed")
                .register(meters);
        this.refused = Counter.builder("stats.increments")
                .tag("outcome", "refused")
                .description("increments refused for a stale fencing token (rolled back)")
                .register(meters);
    }

    @Scheduled(fixedDelayString = "${counter.interval:1s}")
    public void tick() {
        running.lock();
        try {
            if (stopped) {
                return;
            }
            LocalDate day = LocalDate.now(clock);
            try {
                DailyStats.Increment done = stats.increment(day, 0L); // 0: the advice passes the hold's token
                committed.increment();
                log.info("stats {}: {} (fencing token {})", done.day(), done.increments(), done.token());
            } catch (StaleTokenException e) {
                refused.increment();
                log.warn(e.getMessage());
            }
        } finally {
            running.unlock();
        }
    }

    /** The increments this instance committed since it started. */
    public long committed() {
        return (long) committed.count();
    }

    /** The increments this instance had refused since it started. */
    public long refused() {
        return (long) refused.count();
    }

    /** Runs no more ticks; returns once the tick in progress, if any, has committed or rolled back. */
    public void stop() {
        running.lock();
        try {
            stopped = true;
        } finally {
            running.unlock();
        }
    }
}
