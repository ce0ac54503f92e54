package io.distlock.spi;

/** How a claim shares its name with other claims (as AQS's exclusive and shared modes). */
public enum Mode {
    /** No other owner holds anything of the name: a lock, a write lock. */
    EXCLUSIVE,
    /** Other shared claims may hold at the same time, up to the name's size: a read lock, a semaphore's permits. */
    SHARED
}
