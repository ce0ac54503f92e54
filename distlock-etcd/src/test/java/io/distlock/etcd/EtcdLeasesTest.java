package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.DistributedLockException;
import io.etcd.jetcd.common.exception.EtcdExceptionFactory;
import io.grpc.Status;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** What counts as etcd saying that it no longer knows a lease. */
class EtcdLeasesTest {
    private static final Status LEASE_NOT_FOUND =
            Status.NOT_FOUND.withDescription("etcdserver: requested lease not found");

    @Test
    void leaseNotFound_asJetcdsException_orAsTheGrpcStatusItPassesOnAfterItsRetries_atAnyDepth() {
        assertThat(EtcdLeases.leaseNotFound(
                        new CompletionException(EtcdExceptionFactory.toEtcdException(LEASE_NOT_FOUND))))
                .isTrue();
        assertThat(EtcdLeases.leaseNotFound(LEASE_NOT_FOUND.asRuntimeException()))
                .isTrue();
        assertThat(EtcdLeases.leaseNotFound(LEASE_NOT_FOUND.asException())).isTrue();
        assertThat(EtcdLeases.leaseNotFound(new DistributedLockException(
                        "acquire failed", new CompletionException(LEASE_NOT_FOUND.asRuntimeException()))))
                .isTrue();
    }

    @Test
    void otherFailures_areNotALostLease() {
        assertThat(EtcdLeases.leaseNotFound(Status.NOT_FOUND
                        .withDescription("etcdserver: key not found")
                        .asRuntimeException()))
                .isFalse();
        assertThat(EtcdLeases.leaseNotFound(Status.UNAVAILABLE
                        .withDescription("etcdserver: requested lease not found")
                        .asRuntimeException()))
                .isFalse();
        assertThat(EtcdLeases.leaseNotFound(new RuntimeException("requested lease not found")))
                .isFalse();
    }
}
