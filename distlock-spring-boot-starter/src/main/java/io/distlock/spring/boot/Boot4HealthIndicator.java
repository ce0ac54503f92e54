package io.distlock.spring.boot;

import io.distlock.LockClient;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The Spring Boot 4 form of {@link DistlockHealthIndicator} ({@code org.springframework.boot.health.contributor},
 * module {@code spring-boot-health}): the same check, the same details. Loaded only when that package is present.
 */
final class Boot4HealthIndicator extends AbstractHealthIndicator {
    private final LockClient client;
    private final String backend;

    Boot4HealthIndicator(LockClient client, String backend) {
        super("distlock health check failed");
        this.client = client;
        this.backend = backend;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.up().withDetails(HealthProbe.check(client, backend));
    }
}
