package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.spi.OwnerId;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtcdKeysTest {
    private static final List<String> NAMES = List.of(
            "a",
            "a/b",
            "a/",
            "/a",
            "a%2Fb",
            "a%",
            "a b",
            "a\nb",
            "a\u0000",
            "{a}",
            "a:b",
            "a.b",
            "..",
            "../a",
            "é",
            "日本",
            "\uD83D\uDE00",
            "a".repeat(5000));

    private final EtcdKeys keys = new EtcdKeys("distlock/");

    @Test
    void encode_keepsUnreservedCharacters_percentEncodesTheRest() {
        assertThat(EtcdKeys.encode("order:123-x_y.z~")).isEqualTo("order:123-x_y.z~");
        assertThat(EtcdKeys.encode("a/b c%")).isEqualTo("a%2Fb%20c%25");
        assertThat(EtcdKeys.encode("é")).isEqualTo("%C3%A9");
    }

    @Test
    void decode_ofEncode_returnsTheName() {
        for (String name : NAMES) {
            assertThat(EtcdKeys.decode(EtcdKeys.encode(name))).isEqualTo(name);
        }
    }

    @Test
    void namePrefix_ofDistinctNames_neverPrefixOfOneAnother() {
        for (String x : NAMES) {
            for (String y : NAMES) {
                if (!x.equals(y)) {
                    assertThat(keys.namePrefix(y)).as("%s vs %s", x, y).doesNotStartWith(keys.namePrefix(x));
                }
            }
        }
    }

    @Test
    void ownerKey_ofAnyName_staysInsideItsNamePrefix() {
        for (String name : NAMES) {
            String key = keys.ownerKey(name, "client:t1");
            assertThat(key).startsWith("distlock/").startsWith(keys.namePrefix(name));
            assertThat(key.substring("distlock/".length(), key.indexOf('/', "distlock/".length())))
                    .doesNotContain("/", "\n", " ");
        }
    }

    @Test
    void parse_ofOwnerKey_returnsNameAndOwner() {
        for (String name : NAMES) {
            EtcdKeys.Parsed p = keys.parse(keys.ownerKey(name, "abc@12:h7"));
            assertThat(p).isEqualTo(new EtcdKeys.Parsed(name, "abc@12:h7"));
        }
    }

    @Test
    void parse_ofForeignKey_returnsNull() {
        assertThat(keys.parse("other/a/owner")).isNull();
        assertThat(keys.parse("distlock/no-terminator")).isNull();
        assertThat(keys.parse("distlock/bad%zz/owner")).isNull();
        assertThat(keys.parse("distlock/raw space/owner")).isNull();
    }

    @Test
    void namesStartingWith_matchesExactlyTheNamesWithThatPrefix() {
        for (String prefix : List.of("a", "a/", "", "é", "a%")) {
            String range = keys.namesStartingWith(prefix);
            for (String name : NAMES) {
                assertThat(keys.ownerKey(name, "o").startsWith(range))
                        .as("'%s' under '%s'", name, prefix)
                        .isEqualTo(name.startsWith(prefix));
            }
        }
    }

    @Test
    void leaseOf_ofValue_returnsTheNominalLease() {
        String value = EtcdKeys.value(new OwnerId("c:t1"), Duration.ofMillis(1200));
        assertThat(value).isEqualTo("lease=1200ms owner=c:t1");
        assertThat(EtcdKeys.leaseOf(value)).isEqualTo(Duration.ofMillis(1200));
        assertThat(EtcdKeys.leaseOf("c:t1")).isNull();
        assertThat(EtcdKeys.leaseOf("lease=xms owner=c")).isNull();
    }
}
