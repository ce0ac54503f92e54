package io.distlock.etcd;

import io.distlock.DistributedLockException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Round trips
 *   Every request of the store is a jetcd future that one caller waits for through await, at most the request timeout.
 *   A store step must complete on an interrupted thread (a waiter being interrupted), so await keeps the interrupt for
 *   the caller instead of obeying it. A failure is rethrown unchecked with its cause; a timeout cancels the request.
 *
 * Owner-checked deletes
 *   A key names its owner, but the owner may have written it more than once. deleteIfRevision deletes a key only while
 *   it has the create revision the caller knows, so a newer key of the same owner (a new queue entry, a new hold) is
 *   never touched.
 *
 * Queue reads
 *   HEAD reads the key with the lowest create revision under a name's prefix: the holder, since the keys of a name
 *   form a queue in create-revision order.
 */
/** The etcd round trips every part of the store shares: waiting for an answer, owner-checked deletes, queue reads. */
final class EtcdRequests {
    private static final DeleteOption PREV_KV =
            DeleteOption.builder().withPrevKV(true).build();
    /** The lowest key of a prefix by create revision, without its value: the head of a name's queue. */
    static final GetOption HEAD = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .withKeysOnly(true)
            .build();
    /** The head of a name's queue with its value, for operators. */
    static final GetOption HEAD_WITH_VALUE = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(1)
            .build();

    static final GetOption KEY_ONLY = GetOption.builder().withKeysOnly(true).build();

    private final KV kv;
    private final Duration timeout;

    EtcdRequests(KV kv, Duration timeout) {
        this.kv = kv;
        this.timeout = timeout;
    }

    KV kv() {
        return kv;
    }

    Duration timeout() {
        return timeout;
    }

    /** Waits for one round trip, bounded by the request timeout; an interrupt is kept for the caller, not obeyed. */
    <T> T await(CompletableFuture<T> future, String operation) {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            for (; ; ) {
                try {
                    return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e;
                    if (cause instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new RequestFailedException("etcd " + operation + " failed: " + cause, cause);
                } catch (TimeoutException e) {
                    future.cancel(true);
                    throw new RequestFailedException(
                            "etcd " + operation + " did not answer within " + timeout + " (request timeout)", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Deletes {@code k} if it still has this create revision; whether it did. */
    boolean deleteIfRevision(ByteSequence k, long revision) {
        return deleteIfRevision(k, revision, "delete");
    }

    /** {@link #deleteIfRevision(ByteSequence, long)}, its failures naming the operation {@code what}. */
    boolean deleteIfRevision(ByteSequence k, long revision, String what) {
        return await(
                        kv.txn()
                                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                                .Then(Op.delete(k, DeleteOption.DEFAULT))
                                .commit(),
                        what)
                .isSucceeded();
    }

    /**
     * Sends a transaction that deletes {@code k} if it still has this create revision, and does not wait for it. The
     * answer is the deleted key as it was (its lease included), or null if no key had that revision; it fails if etcd
     * does not answer within the request timeout.
     */
    CompletableFuture<@Nullable KeyValue> deleteIfRevisionAsync(ByteSequence k, long revision) {
        return kv.txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                .Then(Op.delete(k, PREV_KV))
                .commit()
                .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .thenApply(EtcdRequests::deleted);
    }

    private static @Nullable KeyValue deleted(TxnResponse r) {
        if (!r.isSucceeded()) {
            return null;
        }
        for (DeleteResponse d : r.getDeleteResponses()) {
            List<KeyValue> prev = d.getPrevKvs();
            if (!prev.isEmpty()) {
                return prev.get(0);
            }
        }
        return null;
    }

    static @Nullable KeyValue first(GetResponse r) {
        List<KeyValue> kvs = r.getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /**
     * A request that failed or timed out; not a {@link DistributedLockException} itself, so the engine wraps it with
     * the operation and the lock's name.
     */
    static final class RequestFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RequestFailedException(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }
}
