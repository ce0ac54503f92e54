package com.example.counter;

import java.time.Clock;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The statistics service: every instance runs {@link StatsJob}, which adds to today's row of {@code daily_stats} by
 * read-modify-write. Run as many instances as you like on one database: the lock makes the increments one at a time,
 * and the fencing token refuses the write of an instance whose hold ran out meanwhile.
 */
@SpringBootApplication
@EnableScheduling
public class CounterApplication {

    public static void main(String[] args) {
        SpringApplication.run(CounterApplication.class, args);
    }

    /** The clock that says which day it is: the day is the lock's key and the row's. */
    @Bean
    Clock clock() {
        return Clock.systemDefaultZone();
    }
}
