package io.distlock.spring.boot;

import io.distlock.LockClient;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * Up when the store answers one read ({@code admin().inspect} of a name nobody uses), down with the store's error
 * otherwise. This is the Spring Boot 3 indicator ({@code org.springframework.boot.actuate.health}); on Spring Boot 4
 * the same check is a {@code org.springframework.boot.health.contributor.HealthIndicator} of the same bean name,
 * {@code distlockHealthIndicator}.
 */
public class DistlockHealthIndicator extends AbstractHealthIndicator {
    private final LockClient client;
    private final String backend;

    public DistlockHealthIndicator(LockClient client, String backend) {
        super("distlock health check failed");
        this.client = client;
        this.backend = backend;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.up().withDetails(HealthProbe.check(client, backend));
    }
}
