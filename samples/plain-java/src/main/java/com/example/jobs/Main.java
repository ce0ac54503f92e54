package com.example.jobs;

import io.distlock.LockClient;
import io.distlock.redis.RedisLockClient;
import java.time.Duration;
import java.util.OptionalLong;

/** Runs the nightly job once under a lock on Redis: {@code Main [redis://host:port]}. */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws InterruptedException {
        String uri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
        try (LockClient client = RedisLockClient.create(uri)) {
            NightlyJob job = new NightlyJob(client, () -> System.out.println("nightly job: running"));
            OptionalLong token = job.run(Duration.ofMinutes(1));
            if (token.isEmpty()) {
                throw new IllegalStateException("another instance held jobs:nightly on " + uri + " for a minute");
            }
            System.out.println("nightly job: done under the lock on " + uri + ", fencing token " + token.getAsLong());
        }
    }
}
