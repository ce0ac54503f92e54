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
-- Read-write locks and semaphores (TABLE mode). One row per name: what it is used as and a semaphore's size (kept
-- once set); acquirers lock this row FOR UPDATE, which serializes every grant decision of the name.
CREATE TABLE IF NOT EXISTS ${table}_name (
    name_hash CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
    name      MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    kind      CHAR(1) CHARACTER SET ascii NOT NULL,  -- 'R' read-write lock, 'S' semaphore
    size      INT NOT NULL                           -- a semaphore's permits in all; 0 until used as a semaphore
) ENGINE = InnoDB;
-- One row per hold (granted = 1, expires_at its lease end) or waiter (granted = 0, expires_at its queue deadline).
CREATE TABLE IF NOT EXISTS ${table}_claim (
    name_hash     CHAR(64) CHARACTER SET ascii NOT NULL,
    owner         VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    mode          CHAR(1) CHARACTER SET ascii NOT NULL,  -- 'X' exclusive, 'S' shared
    permits       INT NOT NULL,
    granted       SMALLINT NOT NULL,
    ticket        BIGINT NOT NULL,  -- queue order, from the fencing sequence
    expires_at    BIGINT NOT NULL,
    fencing_token BIGINT NOT NULL,
    PRIMARY KEY (name_hash, owner, mode),
    INDEX ${table}_claim_expires (expires_at)
) ENGINE = InnoDB;
-- Count-down latches: the count, and the ids of the count-downs it has counted (so a retried call counts once).
CREATE TABLE IF NOT EXISTS ${table}_latch (
    name_hash  CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
    name       MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    count_left BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS ${table}_latch_call (
    name_hash CHAR(64) CHARACTER SET ascii NOT NULL,
    call_id   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    PRIMARY KEY (name_hash, call_id)
) ENGINE = InnoDB;
