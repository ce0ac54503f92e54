package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Boot's {@code spring.data.redis.*} settings, as distlock binds them on Boot 3 and Boot 4 alike, to a Redis URI. */
class SpringDataRedisSettingsTest {

    static SpringDataRedisSettings bind(String... keyValues) {
        Map<String, String> map = new HashMap<>();
        for (String kv : keyValues) {
            int eq = kv.indexOf('=');
            map.put("spring.data.redis." + kv.substring(0, eq), kv.substring(eq + 1));
        }
        return new Binder(new MapConfigurationPropertySource(map))
                .bind("spring.data.redis", SpringDataRedisSettings.class)
                .orElseGet(SpringDataRedisSettings::new);
    }

    @Test
    void nothingSet_givesBootsDefaults() {
        RedisURI uri = RedisBackend.uri(bind());
        assertThat(uri.getHost()).isEqualTo("localhost");
        assertThat(uri.getPort()).isEqualTo(6379);
        assertThat(uri.getDatabase()).isZero();
        assertThat(uri.isSsl()).isFalse();
        assertThat(uri.getUsername()).isNull();
        assertThat(uri.getPassword()).isNull();
    }

    @Test
    void standalone_takesEverySetting() {
        RedisURI uri = RedisBackend.uri(bind(
                "host=redis.example",
                "port=6380",
                "database=3",
                "username=app",
                "password=secret",
                "ssl.enabled=true",
                "timeout=750ms",
                "client-name=jobs"));
        assertThat(uri.getHost()).isEqualTo("redis.example");
        assertThat(uri.getPort()).isEqualTo(6380);
        assertThat(uri.getDatabase()).isEqualTo(3);
        assertThat(uri.getUsername()).isEqualTo("app");
        assertThat(uri.getPassword()).isEqualTo("secret".toCharArray());
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getTimeout()).isEqualTo(Duration.ofMillis(750));
        assertThat(uri.getClientName()).isEqualTo("jobs");
    }

    @Test
    void sslBundle_turnsSslOnAsInBoot() {
        assertThat(RedisBackend.uri(bind("ssl.bundle=redis")).isSsl()).isTrue();
        assertThat(RedisBackend.uri(bind("ssl.bundle=redis", "ssl.enabled=false"))
                        .isSsl())
                .isFalse();
    }

    @Test
    void url_winsOverHostAndPort() {
        RedisURI uri = RedisBackend.uri(bind("url=rediss://u:p@cache.example:6390/2", "host=ignored", "port=1"));
        assertThat(uri.getHost()).isEqualTo("cache.example");
        assertThat(uri.getPort()).isEqualTo(6390);
        assertThat(uri.getDatabase()).isEqualTo(2);
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getPassword()).isEqualTo("p".toCharArray());
    }

    @Test
    void sentinel_givesMasterAndSentinels() {
        RedisURI uri = RedisBackend.uri(bind(
                "sentinel.master=mymaster",
                "sentinel.nodes=s1:26380,s2",
                "sentinel.password=sp",
                "password=dp",
                "database=1"));
        assertThat(uri.getSentinelMasterId()).isEqualTo("mymaster");
        assertThat(uri.getSentinels()).hasSize(2);
        assertThat(uri.getSentinels().get(0).getHost()).isEqualTo("s1");
        assertThat(uri.getSentinels().get(0).getPort()).isEqualTo(26380);
        assertThat(uri.getSentinels().get(0).getPassword()).isEqualTo("sp".toCharArray());
        assertThat(uri.getSentinels().get(1).getPort()).isEqualTo(26379);
        assertThat(uri.getPassword()).isEqualTo("dp".toCharArray());
        assertThat(uri.getDatabase()).isEqualTo(1);
    }

    @Test
    void cluster_givesSeedsWithCredentialsAndTls() {
        SpringDataRedisSettings settings =
                bind("cluster.nodes=n1:7000,[::1]:7001", "username=app", "password=p w", "ssl.enabled=true");
        SpringDataRedisSettings.Cluster cluster = settings.getCluster();
        assertThat(cluster).isNotNull();
        assertThat(RedisBackend.clusterSeeds(
                        settings, Objects.requireNonNull(cluster).getNodes()))
                .containsExactly("rediss://app:p%20w@n1:7000", "rediss://app:p%20w@::1:7001");
    }
}
