package io.distlock.bench;

import java.util.concurrent.locks.Lock;

/** One client of one lock implementation: hands out {@link Lock} views by name, closed after the phase. */
interface LockProvider extends AutoCloseable {

    /** The lock named {@code name} in this client. */
    Lock lock(String name);

    @Override
    void close();

    /** Opens clients of one implementation; {@link #name()} labels the rows of the report. */
    interface Factory {
        String name();

        LockProvider open();
    }

    /** A factory from a label and an opener. */
    static Factory factory(String name, java.util.function.Supplier<LockProvider> opener) {
        return new Factory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public LockProvider open() {
                return opener.get();
            }
        };
    }
}
