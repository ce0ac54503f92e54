package com.example.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.testkit.InMemoryLockClient;
import io.distlock.testkit.InMemoryLockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Two instances of the service, as two clients of one in-memory lock server: no Redis needed. */
class NightlyJobTest {

    @Test
    void run_whileAnotherInstanceRuns_skips() throws InterruptedException {
        try (InMemoryLockServer server = InMemoryLockServer.create();
                InMemoryLockClient first = server.newClient();
                InMemoryLockClient second = server.newClient()) {
            List<OptionalLong> secondRuns = new ArrayList<>();
            NightlyJob secondJob = new NightlyJob(second, () -> {});
            NightlyJob firstJob = new NightlyJob(first, () -> {
                try {
                    secondRuns.add(secondJob.run(Duration.ofMillis(50)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });

            OptionalLong firstRun = firstJob.run(Duration.ZERO);

            assertTrue(firstRun.isPresent(), "the first instance runs the job");
            assertEquals(List.of(OptionalLong.empty()), secondRuns, "the second instance skips while it runs");
        }
    }

    @Test
    void run_afterTheOtherInstanceFinished_runsWithAHigherToken() throws InterruptedException {
        try (InMemoryLockServer server = InMemoryLockServer.create();
                InMemoryLockClient first = server.newClient();
                InMemoryLockClient second = server.newClient()) {
            long firstToken = new NightlyJob(first, () -> {}).run(Duration.ZERO).orElseThrow();
            long secondToken = new NightlyJob(second, () -> {}).run(Duration.ZERO).orElseThrow();

            assertTrue(secondToken > firstToken, "tokens grow: " + firstToken + " then " + secondToken);
        }
    }
}
