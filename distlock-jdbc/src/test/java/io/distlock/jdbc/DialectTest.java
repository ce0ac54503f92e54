package io.distlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class DialectTest {

    @ParameterizedTest
    @EnumSource(Dialect.class)
    void schema_splitsIntoStatements_withThePrefixFilledIn(Dialect d) {
        List<String> ddl = d.schema("acme_locks");
        assertThat(ddl).isNotEmpty();
        assertThat(ddl).noneMatch(s -> s.contains("${table}") || s.endsWith(";") || s.contains("--"));
        assertThat(String.join("\n", ddl))
                .contains("acme_locks_lock")
                .contains("acme_locks_queue")
                .contains("acme_locks_row")
                .contains("acme_locks_fence");
    }

    @Test
    void named_acceptsEveryId_rejectsOthers() {
        for (Dialect d : Dialect.values()) {
            assertThat(Dialect.named(d.id().toUpperCase(java.util.Locale.ROOT))).isEqualTo(d);
        }
        assertThatThrownBy(() -> Dialect.named("oracle"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'oracle'");
    }

    @Test
    void isTransient_classifiesDeadlocksAndLostConnections() {
        assertThat(Dialect.isTransient(new SQLException("deadlock", "40P01"))).isTrue();
        assertThat(Dialect.isTransient(new SQLException("serialization", "40001")))
                .isTrue();
        assertThat(Dialect.isTransient(new SQLException("gone", "08006"))).isTrue();
        assertThat(Dialect.isTransient(new SQLException("mariadb deadlock", "HY000", 1213)))
                .isTrue();
        assertThat(Dialect.isTransient(new SQLException("syntax", "42601"))).isFalse();
        assertThat(Dialect.isTransient(new SQLException("duplicate", "23505"))).isFalse();
    }

    @Test
    void isDuplicateKey_onEveryDatabase() {
        assertThat(Dialect.isDuplicateKey(new SQLException("pg", "23505"))).isTrue();
        assertThat(Dialect.isDuplicateKey(new SQLException("mariadb", "23000", 1062)))
                .isTrue();
        assertThat(Dialect.isDuplicateKey(new SQLException("other", "23503"))).isFalse();
    }
}
