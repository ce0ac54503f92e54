package io.distlock.cli;

/**
 * The demo's protected resource: counters in the same store as the locks, each a value and the highest fencing token
 * it accepted a write with. A fenced write is refused when its token is lower than that: a holder whose lease ran out
 * during a pause cannot overwrite the work of the holders after it.
 */
interface SharedCounter extends AutoCloseable {

    /** Creates the counter {@code id} with value 0 and fence 0, or resets it. */
    void reset(String id);

    /** The counter's value. */
    long read(String id);

    /** Writes without a fence: the unprotected write of the demo's first phase. */
    void write(String id, long value);

    /** Writes {@code value} if {@code token} is not lower than the highest token seen; returns whether it did. */
    boolean writeFenced(String id, long value, long token);

    /** The highest token the counter accepted a write with, 0 if none. */
    long fence(String id);

    /** Removes the counter. */
    void delete(String id);

    @Override
    void close();
}
