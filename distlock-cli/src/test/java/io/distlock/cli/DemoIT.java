package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code distlock demo} with real worker JVMs on the embedded H2 server. */
class DemoIT {

    @Test
    void demo_embeddedDefault_showsThreePhasesAndNoLostUpdatesUnderTheLock() {
        Cli.Result r = Cli.run("demo", "--processes", "2", "--threads", "2", "--seconds", "1");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("distlock demo: 2 processes x 2 threads, 1 s per phase, on embedded H2 server"
                        + " (jdbc:h2:tcp://127.0.0.1:")
                .contains("phase  ")
                .contains("attempted", "final value", "lost updates", "ops/s", "wait p50", "wait p99", "stale rejected")
                .contains("rejected by the fenced counter; its release reported the hold lost.")
                .contains("OK: no lost updates under the lock, and the stale write was rejected.");

        List<String> phase1 = row(r.out(), "1. no lock");
        List<String> phase2 = row(r.out(), "2. distlock lock");
        List<String> phase3 = row(r.out(), "3. lease lost in a pause");
        // columns: phase, attempted, final value, lost updates, ops/s, wait p50, wait p99, stale rejected
        long attempted1 = number(phase1.get(1));
        long final1 = number(phase1.get(2));
        assertThat(number(phase1.get(3))).isEqualTo(attempted1 - final1);
        assertThat(phase1.get(5)).isEqualTo("-");

        long attempted2 = number(phase2.get(1));
        assertThat(attempted2).isPositive();
        assertThat(number(phase2.get(2))).isEqualTo(attempted2);
        assertThat(phase2.get(3)).isEqualTo("0");
        assertThat(phase2.get(7)).isEqualTo("0");

        // phase 3: the paused holder's write is the one rejected attempt; nothing accepted was lost
        long attempted3 = number(phase3.get(1));
        assertThat(phase3.get(3)).isEqualTo("0");
        assertThat(phase3.get(7)).isEqualTo("1");
        assertThat(number(phase3.get(2))).isEqualTo(attempted3 - 1);

        // progress went to stderr, one bar per phase
        assertThat(r.err())
                .contains("starting worker JVMs")
                .contains("phase 1: no lock")
                .contains("phase 2: distlock lock")
                .contains("phase 3: lease lost in a pause")
                .contains("[##############################] 100%");
    }

    /** The cells of the summary row that starts with {@code label} (cells are separated by two or more spaces). */
    static List<String> row(String out, String label) {
        return out.lines()
                .filter(l -> l.startsWith(label))
                .findFirst()
                .map(l -> Arrays.asList(l.split(" {2,}")))
                .orElseThrow(() -> new AssertionError("no row " + label + " in\n" + out));
    }

    static long number(String cell) {
        return Long.parseLong(cell.replace(",", ""));
    }
}
