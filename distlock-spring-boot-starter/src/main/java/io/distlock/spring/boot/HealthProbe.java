package io.distlock.spring.boot;

import io.distlock.LockClient;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The check of the health indicators, apart from Spring Boot's health types (their package differs between Boot 3 and
 * Boot 4): one read of the store, {@code admin().inspect} of a name nobody uses.
 */
final class HealthProbe {
    static final String PROBE_NAME = "distlock-health-probe";

    private HealthProbe() {}

    /**
     * Reads the store once.
     *
     * @return the details of an up status: backend and client id
     * @throws RuntimeException the store's error, when it does not answer
     */
    static Map<String, Object> check(LockClient client, String backend) {
        var unused = client.admin().inspect(PROBE_NAME);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("backend", backend);
        details.put("clientId", client.clientId());
        return details;
    }
}
