package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockClient;
import io.distlock.LockHold;
import io.distlock.spring.LockNotAcquiredException;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @DistributedLock} on a backend: keys, fencing parameter, failure strategies, release on failure, re-entry,
 * read and write kinds. Subclasses give the properties that choose the backend.
 */
abstract class AnnotationContract {

    /** Properties that choose and configure the backend. */
    abstract String[] backendProperties();

    /** Configuration classes the backend needs (a DataSource, ...). */
    Class<?>[] backendConfiguration() {
        return new Class<?>[0];
    }

    @Configuration(proxyBeanMethods = false)
    static class Jobs {
        @Bean
        LockedJobs lockedJobs(LockClient client) {
            return new LockedJobs(client);
        }
    }

    void run(Consumer<ApplicationContext> test) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DistlockAutoConfiguration.class))
                .withUserConfiguration(Jobs.class)
                .withUserConfiguration(backendConfiguration())
                .withPropertyValues(backendProperties())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LockedJobs jobs = context.getBean(LockedJobs.class);
                    jobs.self(jobs);
                    test.accept(context);
                });
    }

    static String unique(String prefix) {
        return prefix + UUID.randomUUID();
    }

    /** Holds {@code name} through a hold handle (owned by no thread), so the calling thread must wait for it. */
    static LockHold holdElsewhere(ApplicationContext context, String name) throws InterruptedException {
        return context.getBean(LockClient.class).lock(name).acquire();
    }

    @Test
    void spelKey_namesTheLock_andTheTokenParameterIsTheHolds() {
        run(context -> {
            LockedJobs jobs = context.getBean(LockedJobs.class);
            String day = unique("2024-01-01-");
            LockedJobs.Seen first = jobs.stats(day, -1);
            LockedJobs.Seen second = jobs.stats(day, -1);
            assertThat(first.heldByThread())
                    .as("the lock 'stats:<day>' is held during the call")
                    .isTrue();
            assertThat(first.tokenParameter()).isEqualTo(first.tokenOfHold()).isPositive();
            assertThat(second.tokenParameter()).isGreaterThan(first.tokenParameter());
            assertThat(context.getBean(LockClient.class).lock("stats:" + day).isLocked())
                    .as("released on return")
                    .isFalse();
        });
    }

    @Test
    void emptyKey_usesClassAndMethodName() {
        run(context -> assertThat(context.getBean(LockedJobs.class).unnamed()).isEqualTo("held"));
    }

    @Test
    void timeout_throwsNamingTheLock() {
        run(context -> {
            String key = unique("busy-");
            try (LockHold hold = holdElsewhere(context, key)) {
                assertThatThrownBy(() -> context.getBean(LockedJobs.class).tryOnce(key))
                        .isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining(key);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(context.getBean(LockedJobs.class).tryOnce(key)).isEqualTo("ran:" + key);
        });
    }

    @Test
    void timeout_skipReturnsEmptyValues() {
        run(context -> {
            LockedJobs jobs = context.getBean(LockedJobs.class);
            String key = unique("skip-");
            try (LockHold hold = holdElsewhere(context, key)) {
                assertThat(jobs.skipString(key)).isNull();
                assertThat(jobs.skipOptional(key)).isEqualTo(Optional.empty());
                assertThat(jobs.skipInt(key)).isZero();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(jobs.skipString(key)).isEqualTo("ran:" + key);
            assertThat(jobs.skipInt(key)).isEqualTo(7);
        });
    }

    @Test
    void timeout_callsTheFallback() {
        run(context -> {
            LockedJobs jobs = context.getBean(LockedJobs.class);
            String key = unique("fallback-");
            try (LockHold hold = holdElsewhere(context, key)) {
                assertThat(jobs.withFallback(key)).isEqualTo("fallback:" + key);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(jobs.withFallback(key)).isEqualTo("ran:" + key);
        });
    }

    @Test
    void failingWork_releasesTheLock() {
        run(context -> {
            String key = unique("fails-");
            assertThatThrownBy(() -> context.getBean(LockedJobs.class).fails(key))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(key);
            assertThat(context.getBean(LockClient.class).lock(key).isLocked()).isFalse();
        });
    }

    @Test
    void nestedCallWithTheSameKey_reEnters() {
        run(context -> {
            String key = unique("nested-");
            assertThat(context.getBean(LockedJobs.class).outer(key)).isEqualTo("outer+ran:" + key);
            assertThat(context.getBean(LockClient.class).lock(key).isLocked()).isFalse();
        });
    }

    @Test
    void readAndWriteKinds_shareAndExclude() {
        run(context -> {
            LockedJobs jobs = context.getBean(LockedJobs.class);
            String key = unique("rw-");
            LockClient client = context.getBean(LockClient.class);
            try (LockHold reader = client.readWriteLock(key).readLock().acquire()) {
                assertThat(jobs.read(key)).as("readers share").isEqualTo("read:" + key);
                assertThat(jobs.write(key)).as("a writer waits for readers").isNull();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            try (LockHold writer = client.readWriteLock(key).writeLock().acquire()) {
                assertThat(jobs.read(key)).as("a reader waits for the writer").isNull();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(jobs.write(key)).isEqualTo("write:" + key);
        });
    }

    @Test
    void fixedLease_fromAPlaceholder() {
        run(context -> assertThat(context.getBean(LockedJobs.class).leased(unique("leased-")))
                .isTrue());
    }

    @Test
    void badAnnotations_failTheCallNamingTheMethod() {
        run(context -> {
            LockedJobs jobs = context.getBean(LockedJobs.class);
            assertThatThrownBy(() -> jobs.badToken("k", "t"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("badToken")
                    .hasMessageContaining("long");
            assertThatThrownBy(() -> jobs.nullKey("k"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("#missing");
        });
    }
}
