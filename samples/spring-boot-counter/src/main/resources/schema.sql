-- the statistics the job counts: one row per day, and the fencing token of the write that last changed it
CREATE TABLE IF NOT EXISTS daily_stats (
    stats_day DATE PRIMARY KEY,
    increments BIGINT NOT NULL,
    fence_token BIGINT NOT NULL
);
