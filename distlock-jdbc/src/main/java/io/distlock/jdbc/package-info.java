/**
 * Locks in a relational database over JDBC. The one public type is {@link io.distlock.jdbc.JdbcLockClient}: a lock
 * table on database time (mode TABLE), {@code SELECT ... FOR UPDATE} row locks (ROW_LOCK), or PostgreSQL advisory
 * locks and MariaDB/MySQL {@code GET_LOCK} (ADVISORY), on PostgreSQL, MariaDB, MySQL and H2. Everything else is the
 * package-private store behind it.
 */
@NullMarked
package io.distlock.jdbc;

import org.jspecify.annotations.NullMarked;
