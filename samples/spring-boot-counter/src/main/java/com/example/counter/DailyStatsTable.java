package com.example.counter;

import java.time.LocalDate;
import java.util.Optional;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The {@code daily_stats} table (see {@code schema.sql}): one row per day, with the fencing token of the write that
 * last changed it. A write carries the token of the writer's hold and is refused unless that token is greater than
 * the row's: a holder whose lease ran out, and whose lock was taken over and written under since, cannot overwrite
 * the newer value.
 */
@Repository
public class DailyStatsTable {

    /** A day's row: the increments so far and the token of the last write. */
    public record Row(LocalDate day, long increments, long fenceToken) {}

    private final JdbcTemplate jdbc;

    public DailyStatsTable(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    public Optional<Row> read(LocalDate day) {
        return jdbc
                .query(
                        "SELECT increments, fence_token FROM daily_stats WHERE stats_day = ?",
                        (rs, n) -> new Row(day, rs.getLong(1), rs.getLong(2)),
                        day)
                .stream()
                .findFirst();
    }

    /** Writes the day's new value if {@code token} is greater than the token of the row's last write. */
    public boolean update(LocalDate day, long increments, long token) {
        return jdbc.update(
                        "UPDATE daily_stats SET increments = ?, fence_token = ? WHERE stats_day = ? AND fence_token < ?",
                        increments,
                        token,
                        day,
                        token)
                == 1;
    }

    /** Writes the day's first row; refused if the row exists (another holder wrote it since this one read). */
    public boolean insert(LocalDate day, long increments, long token) {
        try {
            return jdbc.update(
                            "INSERT INTO daily_stats (stats_day, increments, fence_token) VALUES (?, ?, ?)",
                            day,
                            increments,
                            token)
                    == 1;
        } catch (DuplicateKeyException e) {
            return false;
        }
    }
}
