/** The redis backend of distlock. */
@NullMarked
package io.distlock.redis;

import org.jspecify.annotations.NullMarked;
