-- distlock schema for MySQL 8.0+. ${table} is the table-name prefix (default "distlock").
-- MySQL has no sequences: fencing tokens come from an AUTO_INCREMENT table, whose counter survives restarts
-- from 8.0 on. One row per held lock (TABLE mode); expiry and deadlines are epoch milliseconds of the DATABASE clock.
CREATE TABLE IF NOT EXISTS ${table}_lock (
    name_hash     CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
    name          MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    owner         VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    expires_at    BIGINT NOT NULL,
    fencing_token BIGINT NOT NULL,
    INDEX ${table}_lock_expires (expires_at)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS ${table}_queue (
    name_hash CHAR(64) CHARACTER SET ascii NOT NULL,
    owner     VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    ticket    BIGINT NOT NULL,
    deadline  BIGINT NOT NULL,
    PRIMARY KEY (name_hash, owner),
    INDEX ${table}_queue_ticket (name_hash, ticket)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS ${table}_row (
    name_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
    name      MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS ${table}_fence (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY
) ENGINE = InnoDB;
