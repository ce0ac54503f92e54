package io.distlock.jdbc;

import io.distlock.DistributedLock;
import java.util.Arrays;
import java.util.UUID;

/**
 * Prints the latency of an uncontended {@code tryLock()} + {@code unlock()} pair per database and mode, one client,
 * one thread, on the local servers. Not a test and not the benchmark (distlock-bench compares with peers); a quick
 * look at the round trips each mode costs. Run with the test class path: {@code java io.distlock.jdbc.JdbcLatencyProbe
 * [iterations]}.
 */
public final class JdbcLatencyProbe {
    private JdbcLatencyProbe() {}

    public static void main(String[] args) {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        Object[][] cases = {
            {TestDatabase.H2_MEM, JdbcLockClient.Mode.TABLE},
            {TestDatabase.MARIADB, JdbcLockClient.Mode.TABLE},
            {TestDatabase.MARIADB, JdbcLockClient.Mode.ROW_LOCK},
            {TestDatabase.MARIADB, JdbcLockClient.Mode.ADVISORY},
            {TestDatabase.POSTGRESQL, JdbcLockClient.Mode.TABLE},
            {TestDatabase.POSTGRESQL, JdbcLockClient.Mode.ROW_LOCK},
            {TestDatabase.POSTGRESQL, JdbcLockClient.Mode.ADVISORY},
        };
        System.out.printf("%-11s %-9s %10s %10s %10s%n", "database", "mode", "p50 us", "p90 us", "p99 us");
        for (Object[] c : cases) {
            TestDatabase db = (TestDatabase) c[0];
            JdbcLockClient.Mode mode = (JdbcLockClient.Mode) c[1];
            try (TestDatabase.Env env = db.start(JdbcLatencyProbe.class);
                    JdbcLockClient client = JdbcLockClient.builder()
                            .dataSource(env.pool)
                            .tableName(env.table)
                            .mode(mode)
                            .createSchemaIfMissing()
                            .build()) {
                DistributedLock lock = client.lock("probe-" + UUID.randomUUID());
                for (int i = 0; i < iterations / 5; i++) { // warm-up
                    if (lock.tryLock()) {
                        lock.unlock();
                    }
                }
                long[] nanos = new long[iterations];
                for (int i = 0; i < iterations; i++) {
                    long start = System.nanoTime();
                    if (!lock.tryLock()) {
                        throw new IllegalStateException("uncontended tryLock failed");
                    }
                    lock.unlock();
                    nanos[i] = System.nanoTime() - start;
                }
                Arrays.sort(nanos);
                System.out.printf(
                        "%-11s %-9s %10d %10d %10d%n",
                        db,
                        mode,
                        nanos[iterations / 2] / 1000,
                        nanos[iterations * 9 / 10] / 1000,
                        nanos[Math.min(iterations - 1, iterations * 99 / 100)] / 1000);
            }
        }
    }
}
