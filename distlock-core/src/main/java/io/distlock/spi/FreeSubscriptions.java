package io.distlock.spi;

/**
 * A {@link ClaimStore} whose {@link ClaimStore#subscribe} costs no round trip once the client is set up (Redis: one
 * channel per client, subscribed once), and where an attempt made while subscribed tells the store that the client
 * waits. An acquire that may wait, for a name that was busy for this client a moment ago, then subscribes before its
 * first attempt, which counts as the re-check after subscribing: one attempt less per contended acquire.
 */
public interface FreeSubscriptions {}
