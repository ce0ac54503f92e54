package io.distlock.spring.boot;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The local stores of the integration tests (scripts/services.sh starts them). */
final class Stores {
    static final String REDIS_HOST = "127.0.0.1";
    static final int REDIS_PORT = 6379;
    static final String ZOOKEEPER = "127.0.0.1:2181";
    static final String ETCD = "http://127.0.0.1:2379";

    private Stores() {}

    static HikariDataSource pool(String url, String user, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword("");
        config.setMaximumPoolSize(size);
        return new HikariDataSource(config);
    }

    @Configuration(proxyBeanMethods = false)
    static class Postgres {
        @Bean(destroyMethod = "close")
        DataSource dataSource() {
            return pool("jdbc:postgresql://127.0.0.1:5432/test", "postgres", 12);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class MariaDb {
        @Bean(destroyMethod = "close")
        DataSource dataSource() {
            return pool("jdbc:mariadb://127.0.0.1:3306/test", "root", 12);
        }
    }
}
