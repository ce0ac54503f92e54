package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NamesTest {

    private static final List<String> ODD = List.of(
            "a",
            "A",
            "a ",
            "a\n",
            "a\u0000",
            "'; DROP TABLE x; --",
            "\"quoted\"",
            "{braces}/slash.dot",
            "ünïcödé-名前-😀",
            "\uD800", // lone high surrogate
            "\uDC00", // lone low surrogate
            "\uFFFD", // what a lone surrogate would become in UTF-8
            "x".repeat(10_000));

    @Test
    void hash_distinctNames_distinctKeys_evenWhereEncodersWouldMergeThem() {
        Set<String> keys = new HashSet<>();
        for (String n : ODD) {
            String key = Names.hash(n);
            assertThat(key).matches("[0-9a-f]{64}");
            keys.add(key);
        }
        assertThat(keys).hasSize(ODD.size());
    }

    @Test
    void getLockName_fitsGetLock_andIsCaseInsensitiveSafe() {
        Set<String> names = new HashSet<>();
        for (String n : ODD) {
            String lockName = Names.getLockName("distlock", n);
            assertThat(lockName).hasSizeLessThanOrEqualTo(64).isEqualTo(lockName.toLowerCase(java.util.Locale.ROOT));
            names.add(lockName);
        }
        assertThat(names).hasSize(ODD.size());
        assertThat(Names.getLockName("t1", "a")).isNotEqualTo(Names.getLockName("t2", "a"));
    }

    @Test
    void advisoryKey_distinctNames_distinctKeys() {
        Set<Long> keys = new HashSet<>();
        for (String n : ODD) {
            keys.add(Names.advisoryKey("distlock", n));
        }
        assertThat(keys).hasSize(ODD.size());
    }

    @Test
    void display_replacesWhatNoTextColumnTakes_keepsTheRest() {
        assertThat(Names.display("plain")).isEqualTo("plain");
        assertThat(Names.display("a\u0000b")).isEqualTo("a\uFFFDb");
        assertThat(Names.display("x\uD800y")).isEqualTo("x\uFFFDy");
        assertThat(Names.display("😀")).isEqualTo("😀");
    }

    @Test
    void likePrefix_escapesWildcards() {
        assertThat(Names.likePrefix("a_b%c!")).isEqualTo("a!_b!%c!!%");
    }

    @Test
    void tableName_acceptsIdentifiers_rejectsInjection() {
        assertThat(Names.tableName("distlock_2")).isEqualTo("distlock_2");
        for (String bad : List.of("", "1abc", "a-b", "a;DROP", "a b", "x".repeat(41), "t\"")) {
            assertThatThrownBy(() -> Names.tableName(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("tableName")
                    .hasMessageContaining("'" + bad + "'");
        }
    }
}
