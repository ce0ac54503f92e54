package io.distlock.redis;

import io.lettuce.core.cluster.SlotHash;

/*
 * Overview
 *
 * Channels
 *   A client is woken on its own channel, '<prefix>wake:<clientId>', whatever lock it waits for: the message names the
 *   lock. Sharded (a Redis 7 Cluster): '<prefix>wake:{<s>}:<clientId>', where <s> is a short string that hashes to the
 *   lock name's slot, so the channel is in the slot of the script that publishes on it (SPUBLISH in a script must stay
 *   in its slot), and a client has one channel per slot it waits in.
 *
 * Publishing
 *   Scripts that may wake a client get the channel prefix (the script appends the client id) and the publish command:
 *   PUBLISH, SPUBLISH, or '' when the client waits by polling (nothing is published).
 */
/** The names of the wake-up channels of one Redis lock client and the command that publishes on them. */
final class WakeChannels {
    private final String prefix;
    private final String clientId;
    private final boolean sharded;
    private final String publish;

    /**
     * @param spin no pub/sub: nothing is published
     * @param sharded SPUBLISH on a channel per slot and client instead of PUBLISH on one channel per client
     */
    WakeChannels(KeyLayout layout, String clientId, boolean spin, boolean sharded) {
        this.prefix = layout.prefix() + "wake:";
        this.clientId = clientId;
        this.sharded = sharded;
        this.publish = spin ? "" : sharded ? "SPUBLISH" : "PUBLISH";
    }

    /** The prefix of every client's wake channel for a name's tag: a client id completes it. */
    String prefix(String tag) {
        return sharded ? prefix + "{" + SlotTags.of(SlotHash.getSlot(tag)) + "}:" : prefix;
    }

    /** This client's wake channel for a name's tag. */
    String channel(String tag) {
        return prefix(tag) + clientId;
    }

    /** PUBLISH, SPUBLISH, or '' when nothing is published. */
    String publish() {
        return publish;
    }

    /** Whether the channels are shard channels (SSUBSCRIBE). */
    boolean sharded() {
        return sharded;
    }

    /** For each Cluster slot a short string that hashes to it, computed once on first use. */
    private static final class SlotTags {
        private static final String[] TAGS = compute();

        static String of(int slot) {
            return TAGS[slot];
        }

        private static String[] compute() {
            String[] tags = new String[SlotHash.SLOT_COUNT];
            int left = tags.length;
            for (int i = 0; left > 0; i++) {
                String candidate = Integer.toString(i, 36);
                int slot = SlotHash.getSlot(candidate);
                if (tags[slot] == null) {
                    tags[slot] = candidate;
                    left--;
                }
            }
            return tags;
        }
    }
}
