package io.distlock.spring;

/**
 * Maps a lock name to the value of the {@code name} tag of the starter's metrics. Lock names are unbounded (they
 * carry ids, dates), so no name tag is added unless a bean of this type exists; it must return a bounded set of values,
 * for example the part of the name before the first ':'.
 */
@FunctionalInterface
public interface LockNameTag {

    /** The tag value for this lock name. */
    String tag(String lockName);
}
