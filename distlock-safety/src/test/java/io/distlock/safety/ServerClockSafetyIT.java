package io.distlock.safety;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.distlock.testkit.Timing;
import io.distlock.testkit.fault.ClockFaults;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Server clock faults: J5 on a MariaDB and a PostgreSQL server of the suite's own, K2 on a ZooKeeper ensemble of its
 * own, each server started on a libfaketime clock ({@link ClockFaults}) whose offset the scenario changes at run time.
 * etcd is a Go binary that reads time without libc, so LD_PRELOAD cannot move its clock; Debian's redis-server does
 * not start under libfaketime (FAULTS.md section 3.1). Tier 2; servers and directories are deleted at the end.
 */
@Tag("tier2")
class ServerClockSafetyIT {

    private static void database(JdbcStores.Db db, String mode) throws Exception {
        assumeTrue(ClockFaults.library().isPresent(), "libfaketime is not installed");
        assumeTrue(DatabaseServer.available(db), db + " is not installed");
        try (ClockFaults.FakeClock clock = ClockFaults.fakeClock(db.name().toLowerCase(java.util.Locale.ROOT));
                DatabaseServer server = DatabaseServer.start(db, clock.environment(), Timing.seconds(120));
                JdbcStores.Database store = new JdbcStores.Database(db, mode, server.port)) {
            System.out.println("SERVER " + server + " on " + clock);
            ServerFaultScenarios.j5DatabaseClockJumps(store, clock, SafetySeeds.seed());
        }
    }

    @Test
    void j5_mariadb_table() throws Exception {
        database(JdbcStores.Db.MARIADB, "TABLE");
    }

    @Test
    void j5_mariadb_sessionLocks() throws Exception {
        database(JdbcStores.Db.MARIADB, "ADVISORY");
    }

    @Test
    void j5_postgresql_table() throws Exception {
        database(JdbcStores.Db.POSTGRESQL, "TABLE");
    }

    @Test
    void j5_postgresql_sessionLocks() throws Exception {
        database(JdbcStores.Db.POSTGRESQL, "ADVISORY");
    }

    @Test
    void j5_mariadb_rowLock() throws Exception {
        database(JdbcStores.Db.MARIADB, "ROW_LOCK");
    }

    @Test
    void j5_postgresql_rowLock() throws Exception {
        database(JdbcStores.Db.POSTGRESQL, "ROW_LOCK");
    }

    @Test
    void k2_zooKeeper() throws Exception {
        assumeTrue(ClockFaults.library().isPresent(), "libfaketime is not installed");
        List<ClockFaults.FakeClock> clocks = new ArrayList<>();
        try {
            ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(3);
            for (int i = 0; i < 3; i++) {
                ClockFaults.FakeClock c = ClockFaults.fakeClock("zk" + i);
                clocks.add(c);
                ensemble.environment(i, c.environment());
            }
            try (ConsensusStores.ZooKeeper store =
                    new ConsensusStores.ZooKeeper(ensemble.start(Duration.ofSeconds(90)))) {
                ServerFaultScenarios.k2ZooKeeperClockJumps(store, clocks, SafetySeeds.seed());
            }
        } finally {
            clocks.forEach(ClockFaults.FakeClock::close);
        }
    }
}
