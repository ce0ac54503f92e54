package io.distlock.jdbc;

import io.distlock.spi.ClaimAdmin;
import io.distlock.spi.ClaimStore;

/** What both JDBC stores are to the engine: a store of holds with its admin. */
interface JdbcStore extends ClaimStore, ClaimAdmin {}
