/** The etcd backend of distlock. */
@NullMarked
package io.distlock.etcd;

import org.jspecify.annotations.NullMarked;
