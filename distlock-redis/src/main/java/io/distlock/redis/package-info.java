/**
 * The Redis backend of distlock: {@link io.distlock.redis.RedisLockClient} over Lettuce, for a standalone server,
 * Sentinel or Cluster. Every lock operation is one Lua script (resources beside these classes) run with {@code
 * EVALSHA}; everything else in the package is package-private.
 */
@NullMarked
package io.distlock.redis;

import org.jspecify.annotations.NullMarked;
