package io.distlock.testkit;

/**
 * Every contract of read-write locks, semaphores and count-down latches that a backend with the claim SPI must pass in
 * one JVM. A backend whose store can be shared by several processes also implements {@link
 * MultiProcessSynchronizerContract}; one whose fixture can lose replies, {@link LostReplyContract}. The write lock and
 * a one-permit semaphore also run the whole lock contract through {@link WriteLockAsLock} and {@link SemaphoreAsLock}.
 */
public interface AllSynchronizerContracts extends ReadWriteLockContract, SemaphoreContract, CountDownLatchContract {}
