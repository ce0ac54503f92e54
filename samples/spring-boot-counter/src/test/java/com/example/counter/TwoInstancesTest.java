package com.example.counter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDate;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ActiveProfiles;

/**
 * Two instances of the application on one database, as in production on two machines: this test's context and a
 * second one started beside it, each with its own connection pool, its own lock client on the JDBC lock table, its
 * own scheduler and web server.
 */
@AutoConfigureObservability(tracing = false) // a test context exports no metrics unless asked: this one serves them
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("two-instances")
class TwoInstancesTest {
    private static final Duration RUN = Duration.ofSeconds(5);

    @Autowired
    StatsJob job;

    @Autowired
    DailyStats stats;

    @Autowired
    DailyStatsTable table;

    @Autowired
    LockClient client;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    Clock clock;

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void twoInstancesCountingTogether_loseNoIncrement_andAnswerTheActuator() throws Exception {
        LocalDate from = LocalDate.now(clock).minusDays(1); // the first instance started counting a moment ago
        try (ConfigurableApplicationContext second = new SpringApplicationBuilder(CounterApplication.class)
                .profiles("two-instances")
                .run()) {
            StatsJob secondJob = second.getBean(StatsJob.class);
            int secondPort = ((WebServerApplicationContext) second).getWebServer().getPort();
            Thread.sleep(RUN.toMillis()); // both jobs count, each tick waiting for the other instance's hold

            for (int p : new int[] {port, secondPort}) {
                String prometheus = get(p, "/actuator/prometheus");
                assertThat(prometheus)
                        .contains("distlock_acquire_seconds_count{")
                        .contains("outcome=\"acquired\"")
                        .contains("backend=\"jdbc\"")
                        .contains("stats_increments_total{");
                assertThat(get(p, "/actuator/distlock")).contains("\"backend\":\"jdbc\"");
            }
            assertThat(get(port, "/actuator/distlock")).contains(client.clientId());
            assertThat(get(secondPort, "/actuator/distlock"))
                    .as("two instances, two lock clients")
                    .contains(second.getBean(LockClient.class).clientId())
                    .doesNotContain(client.clientId());

            job.stop();
            secondJob.stop();
            long inTable = jdbc.queryForObject(
                    "SELECT COALESCE(SUM(increments), 0) FROM daily_stats WHERE stats_day >= ?", Long.class, from);
            System.out.printf(
                    "two instances, %d s: first committed %d, second %d, table %d, refused %d%n",
                    RUN.toSeconds(), job.committed(), secondJob.committed(), inTable, job.refused() + secondJob.refused());
            assertThat(job.committed()).as("first instance's increments").isGreaterThan(20);
            assertThat(secondJob.committed()).as("second instance's increments").isGreaterThan(20);
            assertThat(inTable)
                    .as("the table holds every committed increment of both instances")
                    .isEqualTo(job.committed() + secondJob.committed());
            assertThat(job.refused() + secondJob.refused()).isZero();
        }
    }

    @Test
    void aHolderPausedPastItsLease_hasItsWriteRefused() throws Exception {
        LocalDate day = LocalDate.of(2000, 1, 1); // a day the job does not count
        LockHold stale = client.lock("stats:" + day)
                .tryAcquire(Duration.ofSeconds(10), Duration.ofMillis(300))
                .orElseThrow();
        long staleToken = stale.fencingToken();
        assertThat(table.read(day)).isEmpty(); // what the paused holder read: no row yet
        Thread.sleep(800); // the pause: its lease runs out

        // meanwhile another caller takes the day's lock and counts
        DailyStats.Increment newer =
                CompletableFuture.supplyAsync(() -> stats.increment(day, 0L)).get(30, TimeUnit.SECONDS);
        assertThat(newer.token()).isGreaterThan(staleToken);

        // the paused holder resumes and writes what it computed from its read: refused, both ways
        assertThat(table.insert(day, 1, staleToken)).isFalse();
        assertThat(table.update(day, 1, staleToken)).isFalse();
        assertThat(table.read(day)).contains(new DailyStatsTable.Row(day, 1, newer.token()));
        assertThatThrownBy(stale::close).isInstanceOf(LockLostException.class);
    }

    private String get(int port, String path) throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET %s on port %d", path, port).isEqualTo(200);
        return response.body();
    }
}
