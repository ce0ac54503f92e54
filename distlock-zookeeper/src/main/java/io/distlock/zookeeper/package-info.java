/** The zookeeper backend of distlock. */
@NullMarked
package io.distlock.zookeeper;

import org.jspecify.annotations.NullMarked;
