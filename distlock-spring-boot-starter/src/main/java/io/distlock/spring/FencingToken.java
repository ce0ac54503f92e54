package io.distlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the {@code long} or {@code Long} parameter of a {@link DistributedLock} method that receives the fencing
 * token of the hold: strictly greater than every token issued before for the name. Pass it to the resource the lock
 * protects (a version column, a storage API) so that it refuses the writes of a holder whose lease ran out.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FencingToken {}
