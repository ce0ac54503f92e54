/** Side-by-side benchmark harnesses: distlock against its peers on the same local servers. */
@NullMarked
package io.distlock.bench;

import org.jspecify.annotations.NullMarked;
