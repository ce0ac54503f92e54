-- distlock schema for H2 2.x. ${table} is the table-name prefix (default "distlock").
-- One row per held lock (TABLE mode); expiry and deadlines are epoch milliseconds of the DATABASE clock.
CREATE TABLE IF NOT EXISTS ${table}_lock (
    name_hash     CHAR(64)          NOT NULL PRIMARY KEY,  -- SHA-256 of the lock name
    name          CHARACTER VARYING NOT NULL,              -- the name, for operators
    owner         VARCHAR(255)      NOT NULL,
    expires_at    BIGINT            NOT NULL,
    fencing_token BIGINT            NOT NULL
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
    name_hash CHAR(64)          NOT NULL PRIMARY KEY,
    name      CHARACTER VARYING NOT NULL
);
-- Fencing tokens and queue positions.
CREATE SEQUENCE IF NOT EXISTS ${table}_fence;
