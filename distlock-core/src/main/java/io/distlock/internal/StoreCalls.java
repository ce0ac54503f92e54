package io.distlock.internal;

import io.distlock.DistributedLockException;
import io.distlock.spi.LockKey;
import io.distlock.spi.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the engines call a store: a failure becomes a {@link DistributedLockException} that names the operation and the
 * name (the JDK's argument and state exceptions pass as they are), an interrupt seen in a failure is told apart, and
 * closing a subscription never throws.
 */
final class StoreCalls {
    private static final Logger log = LoggerFactory.getLogger(StoreCalls.class);

    private StoreCalls() {}

    /** Whether a store call failed because the calling thread was interrupted. */
    static boolean interruptedBy(RuntimeException e) {
        if (Thread.interrupted()) {
            return true;
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    static void closeQuietly(Subscription sub) {
        try {
            sub.close();
        } catch (RuntimeException e) {
            log.debug("distlock: closing a subscription failed", e);
        }
    }

    interface StoreCall<T> {
        T run();
    }

    static <T> T call(String operation, LockKey key, StoreCall<T> call) {
        try {
            return call.run();
        } catch (RuntimeException e) {
            throw storeFailure(operation, key, e);
        }
    }

    static RuntimeException storeFailure(String operation, LockKey key, RuntimeException e) {
        if (e instanceof DistributedLockException
                || e instanceof IllegalArgumentException
                || e instanceof IllegalStateException) {
            return e;
        }
        return new DistributedLockException(operation + " of lock '" + abbreviate(key.name()) + "' failed: " + e, e);
    }

    private static String abbreviate(String name) {
        return name.length() <= 200 ? name : name.substring(0, 200) + "…";
    }
}
