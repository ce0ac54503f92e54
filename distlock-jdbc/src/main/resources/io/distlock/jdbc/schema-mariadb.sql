-- distlock schema for MariaDB 10.3+ (sequences). ${table} is the table-name prefix (default "distlock").
-- One row per held lock (TABLE mode); expiry and deadlines are epoch milliseconds of the DATABASE clock.
CREATE TABLE IF NOT EXISTS ${table}_lock (
    name_hash     CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,  -- SHA-256 of the lock name
    name          MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,  -- the name, for operators
    owner         VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    expires_at    BIGINT NOT NULL,
    fencing_token BIGINT NOT NULL,
    INDEX ${table}_lock_expires (expires_at)
) ENGINE = InnoDB;
-- Fair-lock waiters: granted in ticket order; entries not refreshed before their deadline are evicted.
CREATE TABLE IF NOT EXISTS ${table}_queue (
    name_hash CHAR(64) CHARACTER SET ascii NOT NULL,
    owner     VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    ticket    BIGINT NOT NULL,
    deadline  BIGINT NOT NULL,
    PRIMARY KEY (name_hash, owner),
    INDEX ${table}_queue_ticket (name_hash, ticket)
) ENGINE = InnoDB;
-- ROW_LOCK mode: a row per name, locked with SELECT ... FOR UPDATE for the whole hold.
CREATE TABLE IF NOT EXISTS ${table}_row (
    name_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
    name      MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL
) ENGINE = InnoDB;
-- Fencing tokens and queue positions.
CREATE SEQUENCE IF NOT EXISTS ${table}_fence ENGINE = InnoDB;
