package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.spring.HeldLocks;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The actuator side: the {@link DistlockEndpoint}, the {@link DistlockHealthIndicator}, and a meter filter that gives
 * the {@code distlock.acquire} and {@code distlock.hold} timers percentile histograms (the dashboard's quantiles).
 */
@AutoConfiguration(after = DistlockAutoConfiguration.class)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
        })
@ConditionalOnBean(LockClient.class)
@EnableConfigurationProperties(DistlockProperties.class)
public class DistlockActuatorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint(endpoint = DistlockEndpoint.class)
    DistlockEndpoint distlockEndpoint(
            LockClient client, ObjectProvider<HeldLocks> held, DistlockProperties properties) {
        // without distlock's own configuration (an application's client, distlock.enabled=false) nothing is listed
        return new DistlockEndpoint(
                client,
                held.getIfAvailable(HeldLocks::new),
                DistlockBackend.tag(client),
                properties.getActuator().isForceUnlockEnabled());
    }

    /** The health indicator on Spring Boot 3 ({@code org.springframework.boot.actuate.health}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
    @org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator("distlock")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "distlockHealthIndicator")
        DistlockHealthIndicator distlockHealthIndicator(LockClient client) {
            return new DistlockHealthIndicator(client, DistlockBackend.tag(client));
        }
    }

    /**
     * The health indicator on Spring Boot 4, where health moved to {@code org.springframework.boot.health} (module
     * {@code spring-boot-health}): the same check under the same bean name.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator("distlock")
    static class Boot4HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "distlockHealthIndicator")
        Boot4HealthIndicator distlockHealthIndicator(LockClient client) {
            return new Boot4HealthIndicator(client, DistlockBackend.tag(client));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterFilter.class)
    static class MetricsConfiguration {
        @Bean
        MeterFilter distlockHistograms() {
            return new MeterFilter() {
                @Override
                public @Nullable DistributionStatisticConfig configure(
                        Meter.Id id, DistributionStatisticConfig config) {
                    if (id.getType() == Meter.Type.TIMER
                            && (id.getName().equals("distlock.acquire")
                                    || id.getName().equals("distlock.hold"))) {
                        return DistributionStatisticConfig.builder()
                                .percentilesHistogram(true)
                                .build()
                                .merge(config);
                    }
                    return config;
                }
            };
        }
    }
}
