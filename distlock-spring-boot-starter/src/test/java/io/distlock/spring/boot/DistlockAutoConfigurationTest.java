package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockAdmin;
import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.redis.RedisLockClient;
import io.distlock.spring.HeldLocks;
import io.distlock.spring.LockTemplate;
import io.distlock.testkit.ForwardingLockClient;
import io.distlock.testkit.InMemoryLockClient;
import io.distlock.testkit.InMemoryLockServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.aop.Advisor;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Every condition and property of the auto-configuration, on the in-memory client and an in-process H2. */
class DistlockAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(DistlockAutoConfiguration.class, DistlockActuatorAutoConfiguration.class));

    @Configuration(proxyBeanMethods = false)
    static class H2 {
        @Bean
        DataSource dataSource() {
            JdbcDataSource ds = new JdbcDataSource();
            ds.setURL("jdbc:h2:mem:" + java.util.UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
            return ds;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {
        static final InMemoryLockClient CLIENT = InMemoryLockClient.create();

        @Bean
        LockClient myClient() {
            return CLIENT;
        }
    }

    static final AtomicInteger jdbcCustomized = new AtomicInteger();
    static final AtomicInteger redisCustomized = new AtomicInteger();

    @Configuration(proxyBeanMethods = false)
    static class Customizers {
        @Bean
        LockClientBuilderCustomizer<JdbcLockClient.Builder> jdbcCustomizer() {
            return builder -> {
                jdbcCustomized.incrementAndGet();
                builder.tableName("customized");
            };
        }

        @Bean
        LockClientBuilderCustomizer<RedisLockClient.Builder> redisCustomizer() {
            return builder -> redisCustomized.incrementAndGet();
        }
    }

    static boolean tableExists(DataSource ds, String table) throws Exception {
        try (Connection c = ds.getConnection();
                ResultSet rs = c.getMetaData().getTables(null, null, table.toUpperCase(java.util.Locale.ROOT), null)) {
            return rs.next();
        }
    }

    @Test
    void inMemoryBackend_givesClientTemplateAdvisorEndpointAndHealth() {
        runner.withPropertyValues("distlock.backend=in-memory").run(context -> {
            assertThat(context).hasSingleBean(LockClient.class);
            assertThat(context.getBean(LockClient.class)).isInstanceOf(InMemoryLockClient.class);
            assertThat(context.getBean(LockTemplate.class).backend()).isEqualTo("in-memory");
            assertThat(context).hasBean("distlockAdvisor");
            assertThat(context.getBean("distlockAdvisor")).isInstanceOf(Advisor.class);
            assertThat(context).hasBean(SpringBoot.HEALTH_INDICATOR);
            // the indicator of the Boot on the class path (Boot 3's health package or Boot 4's)
            assertThat(context.getBean(SpringBoot.HEALTH_INDICATOR).getClass().getSimpleName())
                    .isEqualTo(SpringBoot.BOOT_4 ? "Boot4HealthIndicator" : "DistlockHealthIndicator");
            SpringBoot.Health health = SpringBoot.health(context);
            assertThat(health.status()).isEqualTo("UP");
            assertThat(health.details())
                    .containsEntry("backend", "in-memory")
                    .containsEntry("clientId", context.getBean(LockClient.class).clientId());
        });
    }

    @Test
    void clientClosesWithTheContext() {
        LockClient[] seen = new LockClient[1];
        runner.withPropertyValues("distlock.backend=in-memory")
                .run(context -> seen[0] = context.getBean(LockClient.class));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> seen[0].lock("after-close"))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void disabled_configuresNothing() {
        runner.withPropertyValues("distlock.enabled=false", "distlock.backend=in-memory")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(LockClient.class);
                    assertThat(context).doesNotHaveBean(LockTemplate.class);
                    assertThat(context).doesNotHaveBean("distlockAdvisor");
                    assertThat(context).doesNotHaveBean(DistlockEndpoint.class);
                });
    }

    @Test
    void annotationDisabled_noAdvisorButAClient() {
        runner.withPropertyValues("distlock.annotation.enabled=false", "distlock.backend=in-memory")
                .run(context -> {
                    assertThat(context).hasSingleBean(LockClient.class);
                    assertThat(context).doesNotHaveBean("distlockAdvisor");
                });
    }

    @Test
    void applicationsOwnClient_wins() {
        runner.withUserConfiguration(OwnClient.class, H2.class).run(context -> {
            assertThat(context).hasSingleBean(LockClient.class);
            assertThat(context.getBean(LockClient.class)).isSameAs(OwnClient.CLIENT);
            assertThat(context.getBean(LockTemplate.class).backend()).isEqualTo("in-memory");
        });
    }

    @Test
    void noBackendConfigured_failsNamingWhatToSet() {
        runner.run(context -> assertThat(context)
                .hasFailed()
                .getFailure()
                .rootCause()
                .hasMessageContaining("no backend is configured")
                .hasMessageContaining("distlock.backend"));
    }

    @Test
    void severalBackendsConfigured_failsNamingThem() {
        runner.withUserConfiguration(H2.class)
                .withPropertyValues("distlock.zookeeper.connect-string=127.0.0.1:1")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("several backends")
                        .hasMessageContaining("jdbc (a DataSource bean)")
                        .hasMessageContaining("zookeeper (distlock.zookeeper.connect-string)"));
    }

    @Test
    void explicitBackend_winsOverTheOthers() {
        runner.withUserConfiguration(H2.class)
                .withPropertyValues(
                        "distlock.zookeeper.connect-string=127.0.0.1:1",
                        "distlock.etcd.endpoints=http://127.0.0.1:1",
                        "distlock.backend=jdbc")
                .run(context -> assertThat(context.getBean(LockClient.class)).isInstanceOf(JdbcLockClient.class));
    }

    @Test
    void explicitBackendWithoutItsModule_fails() {
        runner.withClassLoader(new FilteredClassLoader(InMemoryLockClient.class))
                .withPropertyValues("distlock.backend=in-memory")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("distlock-testkit"));
    }

    @Test
    void dataSourceAlone_givesJdbc_withTheTablesOfTheProperties() {
        runner.withUserConfiguration(H2.class)
                .withPropertyValues("distlock.jdbc.table-name=boot_locks", "distlock.lease-time=7s")
                .run(context -> {
                    assertThat(context.getBean(LockClient.class)).isInstanceOf(JdbcLockClient.class);
                    DataSource ds = context.getBean(DataSource.class);
                    assertThat(tableExists(ds, "boot_locks_lock")).isTrue();
                    assertThat(tableExists(ds, "distlock_lock")).isFalse();
                    assertThat(context.getBean(LockClient.class).lock("a").tryLock())
                            .isTrue();
                });
    }

    @Test
    void createSchemaFalse_leavesTheDatabaseAlone() {
        runner.withUserConfiguration(H2.class)
                .withPropertyValues("distlock.jdbc.create-schema=false")
                .run(context -> assertThat(tableExists(context.getBean(DataSource.class), "distlock_lock"))
                        .isFalse());
    }

    @Test
    void badJdbcMode_failsNamingTheProperty() {
        runner.withUserConfiguration(H2.class)
                .withPropertyValues("distlock.jdbc.mode=sometimes")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .hasStackTraceContaining(
                                "distlock.jdbc.mode must be table, row-lock or advisory: 'sometimes'"));
    }

    @Test
    void redisCommandTimeout_reachesTheClientsBuilder() {
        runner.withPropertyValues(
                        "distlock.backend=redis",
                        "distlock.redis.uri=redis://127.0.0.1:1",
                        "distlock.redis.command-timeout=0ms")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .hasStackTraceContaining("commandTimeout must be at least 1 ms: PT0S"));
    }

    @Test
    void customizers_applyToTheirBackendOnly() {
        jdbcCustomized.set(0);
        redisCustomized.set(0);
        runner.withUserConfiguration(H2.class, Customizers.class).run(context -> {
            assertThat(jdbcCustomized.get()).isEqualTo(1);
            assertThat(redisCustomized.get()).isZero();
            assertThat(tableExists(context.getBean(DataSource.class), "customized_lock"))
                    .isTrue();
        });
    }

    @Test
    void inMemoryCustomizer_canShareAServerBetweenContexts() {
        InMemoryLockServer server = InMemoryLockServer.create();
        ApplicationContextRunner shared = runner.withPropertyValues("distlock.backend=in-memory")
                .withBean("shareServer", LockClientBuilderCustomizer.class, () ->
                        (LockClientBuilderCustomizer<InMemoryLockClient.Builder>) b -> b.server(server));
        shared.run(first -> shared.run(second -> {
            assertThat(first.getBean(LockClient.class).lock("shared").tryLock()).isTrue();
            assertThat(second.getBean(LockClient.class).lock("shared").isLocked())
                    .isTrue();
        }));
    }

    @Test
    void endpoint_listsHolds_inspects_andForceUnlocksOnlyWhenEnabled() {
        ApplicationContextRunner endpoint = runner.withPropertyValues(
                "distlock.backend=in-memory",
                "spring.jmx.enabled=true",
                "management.endpoints.jmx.exposure.include=distlock");
        endpoint.run(context -> {
            DistlockEndpoint ep = context.getBean(DistlockEndpoint.class);
            LockTemplate template = context.getBean(LockTemplate.class);
            String listed = template.execute("listed", token -> {
                DistlockEndpoint.Holds holds = ep.holds();
                assertThat(holds.backend()).isEqualTo("in-memory");
                assertThat(holds.holds()).hasSize(1);
                HeldLocks.Hold h = holds.holds().get(0);
                assertThat(h.name()).isEqualTo("listed");
                assertThat(h.kind()).isEqualTo("lock");
                assertThat(h.fencingToken()).isEqualTo(token);
                assertThat(h.leaseLeft()).as("watchdog").isNull();
                assertThat(ep.inspect("listed")).isNotNull();
                return "ok";
            });
            assertThat(listed).isEqualTo("ok");
            assertThat(ep.holds().holds()).isEmpty();
            assertThat(ep.inspect("listed")).isNull();

            LockHold hold = context.getBean(LockClient.class).lock("stuck").acquire();
            WebEndpointResponse<Map<String, Object>> refused = ep.forceUnlock("stuck");
            assertThat(refused.getStatus()).isEqualTo(DistlockEndpoint.STATUS_FORBIDDEN);
            assertThat(context.getBean(LockClient.class).lock("stuck").isLocked())
                    .isTrue();
            assertThat(hold.isValid()).isTrue();
        });
        endpoint.withPropertyValues("distlock.actuator.force-unlock-enabled=true")
                .run(context -> {
                    DistlockEndpoint ep = context.getBean(DistlockEndpoint.class);
                    var unused = context.getBean(LockClient.class).lock("stuck").acquire();
                    assertThat(ep.inspect("stuck")).isNotNull();
                    assertThat(ep.forceUnlock("stuck").getStatus()).isEqualTo(WebEndpointResponse.STATUS_OK);
                    assertThat(ep.inspect("stuck"))
                            .as("the store no longer has the hold")
                            .isNull();
                });
    }

    @Test
    void disabledWithTheApplicationsClient_stillGivesEndpointAndHealth() {
        runner.withUserConfiguration(OwnClient.class)
                .withPropertyValues(
                        "distlock.enabled=false",
                        "spring.jmx.enabled=true",
                        "management.endpoints.jmx.exposure.include=distlock")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(LockTemplate.class);
                    assertThat(context.getBean(DistlockEndpoint.class).holds().holds())
                            .isEmpty();
                    assertThat(SpringBoot.health(context).status()).isEqualTo("UP");
                });
    }

    @Test
    void endpointNotExposed_isNotCreated() {
        runner.withPropertyValues("distlock.backend=in-memory")
                .run(context -> assertThat(context).doesNotHaveBean(DistlockEndpoint.class));
    }

    /** A client whose store does not answer. */
    @Configuration(proxyBeanMethods = false)
    static class UnreachableStore {
        @Bean(destroyMethod = "close")
        LockClient unreachable() {
            return new ForwardingLockClient(InMemoryLockClient.create()) {
                @Override
                public LockAdmin admin() {
                    throw new IllegalStateException("store unreachable");
                }
            };
        }
    }

    @Test
    void storeNotAnswering_healthIsDownWithTheError() {
        runner.withUserConfiguration(UnreachableStore.class).run(context -> {
            assertThat(context).hasNotFailed();
            SpringBoot.Health health = SpringBoot.health(context);
            assertThat(health.status()).isEqualTo("DOWN");
            assertThat(String.valueOf(health.details().get("error"))).contains("store unreachable");
        });
    }

    @Test
    void healthIndicatorDisabled_isNotCreated() {
        runner.withPropertyValues("distlock.backend=in-memory", "management.health.distlock.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(SpringBoot.HEALTH_INDICATOR));
    }
}
