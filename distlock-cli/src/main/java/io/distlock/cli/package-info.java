/** The {@code distlock} command: the demo, and the tools operators need. */
@NullMarked
package io.distlock.cli;

import org.jspecify.annotations.NullMarked;
