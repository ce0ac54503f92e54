package io.distlock.spring.boot;

import io.distlock.LockClient;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * Up when the store answers one read ({@code admin().inspect} of a name nobody uses), down with the store's error
 * otherwise.
 */
public class DistlockHealthIndicator extends AbstractHealthIndicator {
    static final String PROBE_NAME = "distlock-health-probe";

    private final LockClient client;
    private final String backend;

    public DistlockHealthIndicator(LockClient client, String backend) {
        super("distlock health check failed");
        this.client = client;
        this.backend = backend;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        var unused = client.admin().inspect(PROBE_NAME);
        builder.up().withDetail("backend", backend).withDetail("clientId", client.clientId());
    }
}
