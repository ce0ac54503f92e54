package io.distlock.redis;

import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Names (tags) a client lately saw contended: an attempt of its own was busy, or a lean release found a waiting
 * client. A direct-mapped table of 1,024 hash codes, each slot the last that fell into it; no strings are kept, so a
 * hostile 10 kB name costs 4 bytes. It only chooses between two correct releases: a name pushed out (or never seen)
 * costs its next contended release one more request, a stale entry or another name's equal hash code costs its
 * releases the larger request.
 */
final class ContendedTags {
    private static final int SLOTS = 1024;
    private final AtomicIntegerArray hashes = new AtomicIntegerArray(SLOTS);

    boolean contains(String tag) {
        int h = tag.hashCode();
        return hashes.get(slot(h)) == h;
    }

    void add(String tag) {
        int h = tag.hashCode();
        hashes.lazySet(slot(h), h);
    }

    private static int slot(int h) {
        return (h ^ (h >>> 16)) & (SLOTS - 1);
    }
}
