package io.distlock.testkit;

import io.distlock.spi.Attempt;
import io.distlock.spi.Claim;
import java.io.UncheckedIOException;
import java.net.ConnectException;

/** A store whose server cannot be reached: every attempt fails as a refused connection would. */
final class UnreachableStore extends InMemoryLockStore {
    UnreachableStore(InMemoryLockServer server) {
        super(server);
    }

    @Override
    public Attempt tryAcquire(Claim claim, boolean queue) {
        throw new UncheckedIOException(new ConnectException("Connection refused: in-memory store switched off"));
    }
}
