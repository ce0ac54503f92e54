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
        // the embedded default's H2 serves the database file to the other instances (AUTO_SERVER): on loopback only.
        // Set before the first H2 class reads its system properties.
        if (System.getProperty("h2.bindAddress") == null) {
            System.setProperty("h2.bindAddress", "127.0.0.1");
        }
        SpringApplication.run(CounterApplication.class, args);
    }

    /** The clock that says which day it is: the day is the lock's key and the row's. */
    @Bean
    Clock clock() {
        return Clock.systemDefaultZone();
    }
}
