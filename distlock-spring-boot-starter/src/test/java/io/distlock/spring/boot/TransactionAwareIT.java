package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.spring.DistributedLock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * Concurrent {@code @Transactional} read-modify-write increments of a PostgreSQL row under a {@code @DistributedLock}
 * on Redis, the lock taken inside the transaction: released after the commit they lose nothing; released when the
 * locked method returns (transaction-aware off) the next holder reads the row before the commit, and increments are
 * lost.
 */
class TransactionAwareIT {
    static final int THREADS = 4;
    static final int PER_THREAD = 10;

    public static class CounterDao {
        private final JdbcTemplate jdbc;

        public CounterDao(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
        }

        @DistributedLock(key = "'counter:' + #id")
        public void increment(String id) {
            Integer v = jdbc.queryForObject("SELECT v FROM boot_it_counter WHERE id = ?", Integer.class, id);
            jdbc.update("UPDATE boot_it_counter SET v = ? WHERE id = ?", (v == null ? 0 : v) + 1, id);
        }
    }

    public static class CounterService {
        private final CounterDao dao;

        public CounterService(CounterDao dao) {
            this.dao = dao;
        }

        /** Increments, then does more work in the same transaction before it commits. */
        @Transactional
        public void incrementAndWork(String id) throws InterruptedException {
            dao.increment(id);
            Thread.sleep(15);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class App {
        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new JdbcTransactionManager(dataSource);
        }

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }

        @Bean
        CounterDao counterDao(JdbcTemplate jdbc) {
            return new CounterDao(jdbc);
        }

        @Bean
        CounterService counterService(CounterDao dao) {
            return new CounterService(dao);
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DistlockAutoConfiguration.class))
            .withUserConfiguration(Stores.Postgres.class, App.class)
            .withPropertyValues(
                    "distlock.backend=redis",
                    "distlock.redis.uri=redis://" + Stores.REDIS_HOST + ":" + Stores.REDIS_PORT,
                    "distlock.redis.key-prefix=boot-it:");

    static int concurrentIncrements(ApplicationContext context) throws Exception {
        JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
        jdbc.execute("CREATE TABLE IF NOT EXISTS boot_it_counter (id VARCHAR(64) PRIMARY KEY, v INT NOT NULL)");
        String id = UUID.randomUUID().toString();
        jdbc.update("INSERT INTO boot_it_counter (id, v) VALUES (?, 0)", id);
        CounterService service = context.getBean(CounterService.class);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < PER_THREAD; i++) {
                        service.incrementAndWork(id);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Integer v = jdbc.queryForObject("SELECT v FROM boot_it_counter WHERE id = ?", Integer.class, id);
        jdbc.update("DELETE FROM boot_it_counter WHERE id = ?", id);
        return v == null ? -1 : v;
    }

    @Test
    void releasedAfterCommit_noIncrementIsLost() {
        runner.run(context -> assertThat(concurrentIncrements(context)).isEqualTo(THREADS * PER_THREAD));
    }

    @Test
    void releasedOnReturn_incrementsAreLost() {
        runner.withPropertyValues("distlock.annotation.transaction-aware=false")
                .run(context -> assertThat(concurrentIncrements(context))
                        .as("the next holder read the row before the commit")
                        .isLessThan(THREADS * PER_THREAD));
    }
}
