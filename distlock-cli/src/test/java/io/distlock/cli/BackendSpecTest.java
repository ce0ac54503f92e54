package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BackendSpecTest {

    @Test
    void parse_absent_isEmbedded() {
        assertThat(BackendSpec.parse(null, null, null, "distlock").kind()).isEqualTo(BackendSpec.Kind.EMBEDDED_H2);
    }

    @Test
    void parse_schemes_chooseTheBackend() {
        assertThat(kind("redis://127.0.0.1:6379")).isEqualTo(BackendSpec.Kind.REDIS);
        assertThat(kind("rediss://h:6380/1")).isEqualTo(BackendSpec.Kind.REDIS);
        assertThat(kind("redis-sentinel://h:26379#mymaster")).isEqualTo(BackendSpec.Kind.REDIS);
        assertThat(kind("jdbc:mariadb://127.0.0.1:3306/test")).isEqualTo(BackendSpec.Kind.JDBC);
        assertThat(kind("JDBC:h2:mem:x")).isEqualTo(BackendSpec.Kind.JDBC);
        assertThat(kind("zookeeper://a:2181,b:2181/locks")).isEqualTo(BackendSpec.Kind.ZOOKEEPER);
        assertThat(kind("etcd://a:2379")).isEqualTo(BackendSpec.Kind.ETCD);
    }

    @Test
    void parse_unknownScheme_throwsNamingIt() {
        assertThatThrownBy(() -> BackendSpec.parse("http://x", null, null, "distlock"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'http://x'");
    }

    @Test
    void zooKeeper_connectStringAndRoot() {
        BackendSpec s = BackendSpec.parse("zookeeper://a:2181,b:2182/locks/app/", null, null, "distlock");
        assertThat(s.zooKeeperConnectString()).isEqualTo("a:2181,b:2182");
        assertThat(s.zooKeeperRoot()).isEqualTo("/locks/app");
        BackendSpec noRoot = BackendSpec.parse("zookeeper://a:2181", null, null, "distlock");
        assertThat(noRoot.zooKeeperRoot()).isNull();
    }

    @Test
    void etcd_endpoints() {
        assertThat(BackendSpec.parse("etcd://a:2379,b:2379", null, null, "d").etcdEndpoints())
                .isEqualTo("http://a:2379,http://b:2379");
        assertThat(BackendSpec.parse("etcds://a:2379", null, null, "d").etcdEndpoints())
                .isEqualTo("https://a:2379");
    }

    @Test
    void display_hidesPasswords() {
        assertThat(BackendSpec.parse("redis://user:secret@h:6379", null, null, "d")
                        .display())
                .isEqualTo("redis://user:***@h:6379");
        assertThat(BackendSpec.parse("jdbc:postgresql://h/db?user=u&password=secret&ssl=true", null, null, "d")
                        .display())
                .isEqualTo("jdbc:postgresql://h/db?user=u&password=***&ssl=true");
    }

    private static BackendSpec.Kind kind(String uri) {
        return BackendSpec.parse(uri, null, null, "distlock").kind();
    }
}
