package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.etcd.EtcdLockClient;
import io.distlock.jdbc.JdbcLockClient;
import io.distlock.redis.RedisLockClient;
import io.distlock.spring.DistributedLock;
import io.distlock.spring.DistributedLockInterceptor;
import io.distlock.spring.HeldLocks;
import io.distlock.spring.LockNameTag;
import io.distlock.spring.LockTemplate;
import io.distlock.testkit.InMemoryLockClient;
import io.distlock.zookeeper.ZooKeeperLockClient;
import io.etcd.jetcd.Client;
import io.lettuce.core.RedisClient;
import io.micrometer.observation.ObservationRegistry;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.aop.Advisor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Auto-configuration of distlock: one {@link LockClient}, a {@link LockTemplate} over it, and the advice of {@link
 * DistributedLock}.
 *
 * <h2>Choosing the backend</h2>
 *
 * <p>Each backend whose module is on the class path contributes a {@link DistlockBackend} (nested configurations,
 * conditional on the module's client class). The client bean takes {@code distlock.backend} when it is set, or else
 * the one backend that the application configures (see {@link DistlockBackend#select}); none or several fail the
 * start with a message that names them. An application's own {@link LockClient} bean replaces all of this.
 *
 * <h2>The annotation</h2>
 *
 * <p>An infrastructure advisor matches methods annotated {@link DistributedLock} (on the class or its interfaces);
 * the auto-proxy creator is registered if the application has none. The advice finds the template on its first call,
 * so advising beans does not build the client early.
 */
@AutoConfiguration(
        afterName = {
            // Spring Boot 3
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
            // Spring Boot 4 (modules spring-boot-jdbc and spring-boot-data-redis)
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"
        })
@ConditionalOnBooleanProperty(name = "distlock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DistlockProperties.class)
public class DistlockAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    LockClient distlockClient(DistlockProperties properties, ObjectProvider<DistlockBackend> backends) {
        return DistlockBackend.select(
                        properties.getBackend(), backends.orderedStream().toList())
                .create();
    }

    @Bean
    @ConditionalOnMissingBean
    HeldLocks distlockHeldLocks() {
        return new HeldLocks();
    }

    @Bean
    @ConditionalOnMissingBean
    LockTemplate distlockTemplate(
            LockClient client,
            DistlockProperties properties,
            HeldLocks held,
            ObjectProvider<ObservationRegistry> observations,
            ObjectProvider<LockNameTag> nameTag) {
        return new LockTemplate(
                client,
                DistlockBackend.tag(client),
                observations.getIfUnique(() -> ObservationRegistry.NOOP),
                held,
                nameTag.getIfUnique(),
                properties.getAnnotation().isTransactionAware());
    }

    /** The advice of {@link DistributedLock}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "distlock.annotation.enabled", matchIfMissing = true)
    @Import(AutoProxyRegistrar.class)
    static class AnnotationConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static Advisor distlockAdvisor(
                ObjectProvider<LockTemplate> templates, Environment environment, BeanFactory beanFactory) {
            DistlockProperties.Annotation props = org.springframework.boot.context.properties.bind.Binder.get(
                            environment)
                    .bind("distlock.annotation", DistlockProperties.Annotation.class)
                    .orElseGet(DistlockProperties.Annotation::new);
            DistributedLockInterceptor interceptor = new DistributedLockInterceptor(
                    templates::getObject, props.getWaitTime(), environment::resolvePlaceholders, beanFactory);
            DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
                    new AnnotationMatchingPointcut(null, DistributedLock.class, true), interceptor);
            advisor.setOrder(props.getOrder());
            return advisor;
        }
    }

    /** Registers Spring's infrastructure auto-proxy creator unless a stronger one is registered already. */
    static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {
        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({RedisLockClient.class, RedisClient.class})
    static class RedisBackendConfiguration {
        @Bean
        DistlockBackend distlockRedisBackend(
                DistlockProperties properties,
                Environment environment,
                ObjectProvider<RedisClient> redisClients,
                ObjectProvider<LockClientBuilderCustomizer<RedisLockClient.Builder>> customizers,
                ListableBeanFactory beans) {
            return new RedisBackend(properties, environment, redisClients, customizers, beans);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(JdbcLockClient.class)
    static class JdbcBackendConfiguration {
        @Bean
        DistlockBackend distlockJdbcBackend(
                DistlockProperties properties,
                ObjectProvider<DataSource> dataSources,
                ObjectProvider<LockClientBuilderCustomizer<JdbcLockClient.Builder>> customizers) {
            return new JdbcBackend(properties, dataSources, customizers);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ZooKeeperLockClient.class, CuratorFramework.class})
    static class ZooKeeperBackendConfiguration {
        @Bean
        DistlockBackend distlockZooKeeperBackend(
                DistlockProperties properties,
                ObjectProvider<CuratorFramework> curators,
                ObjectProvider<LockClientBuilderCustomizer<ZooKeeperLockClient.Builder>> customizers) {
            return new ZooKeeperBackend(properties, curators, customizers);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({EtcdLockClient.class, Client.class})
    static class EtcdBackendConfiguration {
        @Bean
        DistlockBackend distlockEtcdBackend(
                DistlockProperties properties,
                ObjectProvider<Client> clients,
                ObjectProvider<LockClientBuilderCustomizer<EtcdLockClient.Builder>> customizers) {
            return new EtcdBackend(properties, clients, customizers);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(InMemoryLockClient.class)
    static class InMemoryBackendConfiguration {
        @Bean
        DistlockBackend distlockInMemoryBackend(
                DistlockProperties properties,
                ObjectProvider<LockClientBuilderCustomizer<InMemoryLockClient.Builder>> customizers) {
            return new InMemoryBackend(properties, customizers);
        }
    }
}
