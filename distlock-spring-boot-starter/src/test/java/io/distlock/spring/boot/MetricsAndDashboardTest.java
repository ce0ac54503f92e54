package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.LockLostException;
import io.distlock.spring.HeldLocks;
import io.distlock.spring.LockNameTag;
import io.distlock.spring.LockNotAcquiredException;
import io.distlock.spring.LockRequest;
import io.distlock.spring.LockTemplate;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * The observations as Boot's metrics turn them into meters (with the real observation, metrics and Prometheus
 * auto-configurations), and the Grafana dashboard's queries against what a Prometheus scrape really shows.
 */
class MetricsAndDashboardTest {
    static final Path DASHBOARD = Path.of("..", "docs", "grafana", "distlock-dashboard.json");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    // Boot 3's names, then Boot 4's (modules spring-boot-micrometer-observation and -metrics)
                    SpringBoot.firstPresent(
                            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
                            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"),
                    SpringBoot.firstPresent(
                            "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
                            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"),
                    SpringBoot.firstPresent(
                            "org.springframework.boot.actuate.autoconfigure.metrics.export.prometheus"
                                    + ".PrometheusMetricsExportAutoConfiguration",
                            "org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus"
                                    + ".PrometheusMetricsExportAutoConfiguration"),
                    DistlockAutoConfiguration.class,
                    DistlockActuatorAutoConfiguration.class))
            // a removed hold is found lost within a third of the watchdog lease; long enough that a loaded machine
            // still renews the others in time
            .withPropertyValues("distlock.backend=in-memory", "distlock.lease-time=3s");

    /** Runs one of each: acquired, timed out, lost. */
    static void exercise(ApplicationContext context) throws InterruptedException {
        LockTemplate template = context.getBean(LockTemplate.class);
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        LockClient client = context.getBean(LockClient.class);
        template.run(LockRequest.of("jobs:one"), token -> {
            LongTaskTimer active = meters.get("distlock.hold.active").longTaskTimer();
            assertThat(active.activeTasks()).as("held now").isEqualTo(1);
        });
        try (LockHold busy = client.lock("jobs:busy").acquire()) {
            assertThatThrownBy(() -> template.run(LockRequest.of("jobs:busy").waitTime(Duration.ZERO), token -> {}))
                    .isInstanceOf(LockNotAcquiredException.class);
        }
        HeldLocks held = context.getBean(HeldLocks.class);
        assertThatThrownBy(() -> template.run(LockRequest.of("jobs:lost"), token -> {
                    assertThat(client.admin().forceUnlock("jobs:lost")).isPresent();
                    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                    while (!held.holds().get(0).lost()) {
                        assertThat(System.nanoTime()).as("the loss is found").isLessThan(deadline);
                        sleep(20);
                    }
                }))
                .isInstanceOf(LockLostException.class);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void observations_becomeTimersByOutcome_activeHolds_andLostHolds() {
        runner.run(context -> {
            exercise(context);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get("distlock.acquire")
                            .tags("backend", "in-memory", "kind", "lock", "outcome", "acquired")
                            .timer()
                            .count())
                    .isEqualTo(2);
            assertThat(meters.get("distlock.acquire")
                            .tags("outcome", "timed_out")
                            .timer()
                            .count())
                    .isEqualTo(1);
            assertThat(meters.get("distlock.hold").tags("kind", "lock").timer().count())
                    .isEqualTo(2);
            assertThat(meters.get("distlock.hold.active").longTaskTimer().activeTasks())
                    .isZero();
            assertThat(meters.get("distlock.hold.lost").counter().count()).isEqualTo(1);
            assertThat(meters.find("distlock.acquire").tagKeys("name").meters())
                    .as("no name tag by default")
                    .isEmpty();
        });
    }

    @Test
    void nameTag_onlyThroughTheMapping() {
        runner.withBean(LockNameTag.class, () -> name -> name.substring(0, name.indexOf(':')))
                .run(context -> {
                    exercise(context);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    assertThat(meters.get("distlock.acquire")
                                    .tags("name", "jobs")
                                    .timers())
                            .isNotEmpty();
                    assertThat(meters.find("distlock.acquire")
                                    .tag("name", "jobs:one")
                                    .meters())
                            .isEmpty();
                });
    }

    @Test
    void everyMetricTheDashboardQueries_isPublished() {
        runner.run(context -> {
            exercise(context);
            String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
            Set<String> published = new TreeSet<>();
            Matcher line = Pattern.compile("(?m)^(distlock_[a-z_]+)[{ ]").matcher(scrape);
            while (line.find()) {
                published.add(line.group(1));
            }
            Set<String> queried = new TreeSet<>();
            Matcher used = Pattern.compile("distlock_[a-z_]+").matcher(Files.readString(DASHBOARD));
            while (used.find()) {
                queried.add(used.group());
            }
            assertThat(queried).as("the dashboard queries distlock metrics").hasSizeGreaterThan(5);
            assertThat(published).containsAll(queried);
            assertThat(scrape).contains("le=").as("histograms for the quantiles");
        });
    }
}
