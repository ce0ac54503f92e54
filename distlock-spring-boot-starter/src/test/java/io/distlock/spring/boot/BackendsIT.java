package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockClient;
import io.distlock.etcd.EtcdLockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.redis.RedisLockClient;
import io.distlock.zookeeper.ZooKeeperLockClient;
import io.lettuce.core.RedisClient;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Each backend configured the way an application has it, against the local stores: the right client is built, it
 * reaches the store (two contexts, as two instances of an application, see each other's lock), and health is up.
 */
class BackendsIT {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(DistlockAutoConfiguration.class, DistlockActuatorAutoConfiguration.class));

    @Configuration(proxyBeanMethods = false)
    static class LettuceBean {
        @Bean(destroyMethod = "shutdown")
        RedisClient redisClient() {
            return RedisClient.create("redis://" + Stores.REDIS_HOST + ":" + Stores.REDIS_PORT);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CuratorBean {
        @Bean(destroyMethod = "close")
        CuratorFramework curator() {
            CuratorFramework curator = CuratorFrameworkFactory.newClient(Stores.ZOOKEEPER, new RetryOneTime(100));
            curator.start();
            return curator;
        }
    }

    /** Starts two contexts of {@code app}: a lock held in the first is seen held from the second. */
    static void twoInstancesShareLocks(ApplicationContextRunner app, Class<? extends LockClient> type) {
        String name = "boot-it-" + UUID.randomUUID();
        app.run(first -> {
            assertThat(first).hasNotFailed();
            assertThat(first.getBean(LockClient.class)).isInstanceOf(type);
            assertThat(SpringBoot.health(first).status()).isEqualTo("UP");
            app.run(second -> {
                LockClient a = first.getBean(LockClient.class);
                LockClient b = second.getBean(LockClient.class);
                assertThat(a.clientId()).isNotEqualTo(b.clientId());
                assertThat(a.lock(name).tryLock()).isTrue();
                try {
                    assertThat(b.lock(name).tryLock())
                            .as("the other instance holds it")
                            .isFalse();
                    assertThat(b.lock(name).isLocked()).isTrue();
                } finally {
                    a.lock(name).unlock();
                }
                assertThat(b.lock(name).tryLock()).isTrue();
                b.lock(name).unlock();
            });
        });
    }

    @Test
    void redis_fromSpringDataRedisProperties() {
        twoInstancesShareLocks(
                runner.withPropertyValues(
                        "spring.data.redis.host=" + Stores.REDIS_HOST,
                        "spring.data.redis.port=" + Stores.REDIS_PORT,
                        "spring.data.redis.database=0"),
                RedisLockClient.class);
    }

    @Test
    void redis_fromSpringDataRedisUrl() {
        twoInstancesShareLocks(
                runner.withPropertyValues(
                        "spring.data.redis.url=redis://" + Stores.REDIS_HOST + ":" + Stores.REDIS_PORT),
                RedisLockClient.class);
    }

    @Test
    void redis_fromDistlockUri() {
        twoInstancesShareLocks(
                runner.withPropertyValues("distlock.redis.uri=redis://" + Stores.REDIS_HOST + ":" + Stores.REDIS_PORT),
                RedisLockClient.class);
    }

    @Test
    void redis_onTheApplicationsLettuceClient() {
        twoInstancesShareLocks(runner.withUserConfiguration(LettuceBean.class), RedisLockClient.class);
    }

    @Test
    void jdbc_onPostgresDataSource() {
        twoInstancesShareLocks(
                runner.withUserConfiguration(Stores.Postgres.class)
                        .withPropertyValues("distlock.jdbc.table-name=boot_it"),
                JdbcLockClient.class);
    }

    @Test
    void jdbc_onMariaDbDataSource_advisoryMode() {
        twoInstancesShareLocks(
                runner.withUserConfiguration(Stores.MariaDb.class).withPropertyValues("distlock.jdbc.mode=advisory"),
                JdbcLockClient.class);
    }

    @Test
    void zookeeper_fromConnectString() {
        twoInstancesShareLocks(
                runner.withPropertyValues(
                        "distlock.zookeeper.connect-string=" + Stores.ZOOKEEPER,
                        "distlock.zookeeper.root-path=/distlock-boot-it"),
                ZooKeeperLockClient.class);
    }

    @Test
    void zookeeper_onTheApplicationsCurator() {
        twoInstancesShareLocks(runner.withUserConfiguration(CuratorBean.class), ZooKeeperLockClient.class);
    }

    @Test
    void etcd_fromEndpoints() {
        twoInstancesShareLocks(
                runner.withPropertyValues(
                        "distlock.etcd.endpoints=" + Stores.ETCD, "distlock.etcd.namespace=distlock-boot-it/"),
                EtcdLockClient.class);
    }
}
