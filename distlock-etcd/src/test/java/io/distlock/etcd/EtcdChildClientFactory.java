package io.distlock.etcd;

import io.distlock.LockClient;
import io.distlock.testkit.ClientFactory;
import java.time.Duration;

/**
 * Makes an etcd lock client in a child JVM of the multi-process contracts; the argument is the endpoints. The lease is
 * 5 s, so a child that is killed while it waits leaves the queue within about 6 s (its lease plus etcd's one second of
 * slack), inside the contract's eviction bound.
 */
public final class EtcdChildClientFactory implements ClientFactory {
    @Override
    public LockClient create(String argument) {
        return EtcdLockClient.builder()
                .endpoints(argument)
                .leaseTtl(Duration.ofSeconds(5))
                // a cold child JVM on a loaded machine can take seconds for its first call (class loading, JIT,
                // connecting), more than the default 5 s request timeout allows
                .requestTimeout(Duration.ofSeconds(20))
                .build();
    }
}
