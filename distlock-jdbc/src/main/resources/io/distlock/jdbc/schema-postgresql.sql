-- distlock schema for PostgreSQL 10+. ${table} is the table-name prefix (default "distlock").
-- One row per held lock (TABLE mode); expiry and deadlines are epoch milliseconds of the DATABASE clock.
CREATE TABLE IF NOT EXISTS ${table}_lock (
    name_hash     CHAR(64)     NOT NULL PRIMARY KEY,  -- SHA-256 of the lock name
    name          TEXT         NOT NULL,              -- the name, for operators
    owner         VARCHAR(255) NOT NULL,
    expires_at    BIGINT       NOT NULL,
    fencing_token BIGINT       NOT NULL
);
CREATE INDEX IF NOT EXISTS ${table}_lock_expires ON ${table}_lock (expires_at);
-- Fair-lock waiters: granted in ticket order; entries not refreshed before their deadline are evicted.
CREATE TABLE IF NOT EXISTS ${table}_queue (
    name_hash CHAR(64)     NOT NULL,
    owner     VARCHAR(255) NOT NULL,
    ticket    BIGINT       NOT NULL,
    deadline  BIGINT       NOT NULL,
    PRIMARY KEY (name_hash, owner)
);
CREATE INDEX IF NOT EXISTS ${table}_queue_ticket ON ${table}_queue (name_hash, ticket);
-- ROW_LOCK mode: a row per name, locked with SELECT ... FOR UPDATE for the whole hold.
CREATE TABLE IF NOT EXISTS ${table}_row (
    name_hash CHAR(64) NOT NULL PRIMARY KEY,
    name      TEXT     NOT NULL
);
-- Fencing tokens and queue positions. CACHE 1 (the default) keeps values increasing across sessions.
CREATE SEQUENCE IF NOT EXISTS ${table}_fence CACHE 1;
-- Read-write locks and semaphores (TABLE mode). One row per name: what it is used as and a semaphore's size (kept
-- once set); acquirers lock this row FOR UPDATE, which serializes every grant decision of the name.
CREATE TABLE IF NOT EXISTS ${table}_name (
    name_hash CHAR(64) NOT NULL PRIMARY KEY,
    name      TEXT     NOT NULL,
    kind      CHAR(1)  NOT NULL,  -- 'R' read-write lock, 'S' semaphore
    size      INTEGER  NOT NULL   -- a semaphore's permits in all; 0 until the name is used as a semaphore
);
-- One row per hold (granted = 1, expires_at its lease end) or waiter (granted = 0, expires_at its queue deadline).
CREATE TABLE IF NOT EXISTS ${table}_claim (
    name_hash     CHAR(64)     NOT NULL,
    owner         VARCHAR(255) NOT NULL,
    mode          CHAR(1)      NOT NULL,  -- 'X' exclusive, 'S' shared
    permits       INTEGER      NOT NULL,
    granted       SMALLINT     NOT NULL,
    ticket        BIGINT       NOT NULL,  -- queue order, from the fencing sequence
    expires_at    BIGINT       NOT NULL,
    fencing_token BIGINT       NOT NULL,
    PRIMARY KEY (name_hash, owner, mode)
);
CREATE INDEX IF NOT EXISTS ${table}_claim_expires ON ${table}_claim (expires_at);
-- Count-down latches: the count, and the ids of the count-downs it has counted (so a retried call counts once).
CREATE TABLE IF NOT EXISTS ${table}_latch (
    name_hash  CHAR(64) NOT NULL PRIMARY KEY,
    name       TEXT     NOT NULL,
    count_left BIGINT   NOT NULL,
    expires_at BIGINT   NOT NULL
);
CREATE TABLE IF NOT EXISTS ${table}_latch_call (
    name_hash CHAR(64)     NOT NULL,
    call_id   VARCHAR(255) NOT NULL,
    PRIMARY KEY (name_hash, call_id)
);
