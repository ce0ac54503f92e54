/** The jdbc backend of distlock. */
@NullMarked
package io.distlock.jdbc;

import org.jspecify.annotations.NullMarked;
