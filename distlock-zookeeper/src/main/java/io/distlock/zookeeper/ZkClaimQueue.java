package io.distlock.zookeeper;

import io.distlock.spi.Claim;
import io.distlock.spi.Mode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/*
 * Overview
 *
 * Role. The queue of a read-write lock or semaphore name as read from its node's children, and the verdict on one
 * entry of it: granted, waiting (and on which entries), or refused because the name is another kind. Pure logic, no
 * ZooKeeper calls, so it is tested without a server.
 *
 * Entry names. An entry is [_c_<uuid>-]k-<header>-<owner tag>-<10-digit sequence>: the optional prefix is Curator's
 * protected mode, the header says what the entry asks for (r: a read hold, w: a write hold, d: a read hold its owner
 * took while holding the write entry, s<size>x<permits>: permits of a semaphore of that size), the owner tag is ZkNames.ownerTag of the owner id, and the suffix is the sequence
 * ZooKeeper appends. The protected prefix holds only hex digits, '_' and '-', so the first "k-" starts our part.
 *
 * Grants. Entries are granted in sequence order, each when everything before it leaves room for it: a writer when no
 * entry precedes it; a reader when no other owner's writer precedes it; a semaphore entry when the permits of every
 * entry before it plus its own fit in the size. Grants are therefore prefix-closed: an entry granted implies every
 * entry before it is granted too, so grant order is creation order and the tokens (from the czxid) grow with it.
 *
 * Downgrades. An owner that holds the write entry and asks for a read gets a d entry, granted at once wherever it
 * queues (it must not wait for writers queued behind its own write hold); a writer is granted only when no other owner's
 * d entry is left anywhere in the queue, so the read hold keeps writers out after the write hold ends. A writer that queued before
 * the downgrade then gets a token below the d entry's (it was created earlier): read tokens fence no writes.
 *
 * Watches. A waiting entry names the entries whose deletion can grant it, and only those: a reader the nearest other
 * owner's writer before it, a writer its nearest predecessor, a semaphore entry every entry before it (any one of them
 * may free the permits it lacks). It also says how many permits must leave from them before it may pass (its
 * shortfall; each entry weighs its permits, a read-write lock entry 1): only entries before it count, and only by
 * leaving, so the shortfall falls exactly by each blocker's weight as it is deleted. No waiter watches the children
 * list, so a new entry wakes nobody.
 *
 * Kinds. The first entry says what the name is; an entry of another kind, or of a semaphore of another size, is
 * refused with IllegalStateException naming both, and so is any entry while the name has a latch.
 */
/** The queue of a read-write lock or semaphore name and the verdict on one entry; see the overview in the source. */
final class ZkClaimQueue {
    private static final int SEQUENCE_DIGITS = 10;
    private static final String MARK = "k-";
    /** The child of a name's node that holds a count-down latch (ZkLatches). */
    static final String LATCH_NODE = "latch";

    private ZkClaimQueue() {}

    /** One entry as parsed from its node name. */
    record Entry(
            String node,
            String ownerTag,
            long sequence,
            Claim.Kind kind,
            Mode mode,
            int size,
            int permits,
            boolean downgrade) {}

    /** What an entry asks for, as written in its name. */
    static String header(Claim.Kind kind, Mode mode, int size, int permits, boolean downgrade) {
        if (kind == Claim.Kind.SEMAPHORE) {
            return "s" + size + "x" + permits;
        }
        return mode == Mode.EXCLUSIVE ? "w" : downgrade ? "d" : "r";
    }

    /**
     * The name handed to ZooKeeper for a new entry; the sequence is appended to it. {@code downgrade}: a read entry
     * of an owner that holds the write entry.
     */
    static String entryPrefix(Claim claim, boolean downgrade) {
        return MARK
                + header(claim.kind(), claim.mode(), claim.size(), claim.permits(), downgrade)
                + "-"
                + ZkNames.ownerTag(claim.owner().value())
                + "-";
    }

    /** Parses a child of a name's node; null for anything else (the latch node, nodes this library did not write). */
    static @Nullable Entry parse(String node) {
        int n = node.length();
        int tagEnd = n - SEQUENCE_DIGITS - 1;
        if (tagEnd < 0 || node.charAt(tagEnd) != '-') {
            return null;
        }
        long sequence = 0;
        for (int i = tagEnd + 1; i < n; i++) {
            char c = node.charAt(i);
            if (c < '0' || c > '9') {
                return null;
            }
            sequence = sequence * 10 + (c - '0');
        }
        int mark = node.indexOf(MARK);
        if (mark < 0) {
            return null;
        }
        int headerStart = mark + MARK.length();
        int headerEnd = node.indexOf('-', headerStart);
        if (headerEnd < 0 || headerEnd >= tagEnd) {
            return null;
        }
        String header = node.substring(headerStart, headerEnd);
        String tag = node.substring(headerEnd + 1, tagEnd);
        if (header.equals("r") || header.equals("d")) {
            return new Entry(
                    node,
                    tag,
                    sequence,
                    Claim.Kind.READ_WRITE_LOCK,
                    Mode.SHARED,
                    Integer.MAX_VALUE,
                    1,
                    header.equals("d"));
        }
        if (header.equals("w")) {
            return new Entry(
                    node, tag, sequence, Claim.Kind.READ_WRITE_LOCK, Mode.EXCLUSIVE, Integer.MAX_VALUE, 1, false);
        }
        int x = header.indexOf('x');
        if (header.startsWith("s") && x > 1) {
            try {
                int size = Integer.parseInt(header, 1, x, 10);
                int permits = Integer.parseInt(header, x + 1, header.length(), 10);
                return new Entry(node, tag, sequence, Claim.Kind.SEMAPHORE, Mode.SHARED, size, permits, false);
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }

    /** The parsed entries of a name's children, in sequence order. */
    static List<Entry> queue(List<String> children) {
        List<Entry> out = new ArrayList<>(children.size());
        for (String child : children) {
            Entry e = parse(child);
            if (e != null) {
                out.add(e);
            }
        }
        Collections.sort(out, (a, b) -> Long.compare(a.sequence(), b.sequence()));
        return out;
    }

    /**
     * The verdict on {@code own} in {@code queue}: granted, or the entries to watch while it waits ({@code blockers},
     * never empty then) and how many of their permits must leave before it may pass ({@code shortfall}: an entry's
     * permits are its weight, 1 for read-write lock entries). {@code own} need not be in the queue: a plain try asks
     * what would happen if it were appended.
     */
    record Verdict(boolean granted, List<Entry> blockers, long shortfall) {
        static final Verdict GRANTED = new Verdict(true, List.of(), 0);

        /** Waits until {@code blocker} leaves. */
        static Verdict waitsFor(Entry blocker) {
            return new Verdict(false, List.of(blocker), blocker.permits());
        }

        /** The node names of the blockers. */
        List<String> watch() {
            List<String> out = new ArrayList<>(blockers.size());
            for (Entry e : blockers) {
                out.add(e.node());
            }
            return out;
        }
    }

    /** Throws IllegalStateException when {@code name} is used as another kind than {@code kind} (or another size). */
    static void checkKind(String name, List<Entry> queue, boolean hasLatch, Claim.Kind kind, int size) {
        if (hasLatch) {
            throw new IllegalStateException("'" + name + "' is in use as a count-down latch, not as a " + kind.label());
        }
        if (queue.isEmpty()) {
            return;
        }
        Entry first = queue.get(0);
        if (first.kind() != kind) {
            throw new IllegalStateException(
                    "'" + name + "' is in use as a " + first.kind().label() + ", not as a " + kind.label());
        }
        if (kind == Claim.Kind.SEMAPHORE && first.size() != size) {
            throw new IllegalStateException("semaphore '" + name + "' has " + first.size()
                    + " permits in all; this client asked for a size of " + size);
        }
    }

    /** The verdict on {@code own}, which is in {@code queue} or, when absent, taken as appended to it. */
    static Verdict verdict(List<Entry> queue, Entry own) {
        List<Entry> before = new ArrayList<>();
        for (Entry e : queue) {
            if (e.sequence() >= own.sequence()) {
                break;
            }
            before.add(e);
        }
        if (own.kind() == Claim.Kind.SEMAPHORE) {
            long used = own.permits();
            for (Entry e : before) {
                used += e.permits();
            }
            if (used <= own.size()) {
                return Verdict.GRANTED;
            }
            return new Verdict(false, List.copyOf(before), used - own.size());
        }
        if (own.mode() == Mode.EXCLUSIVE) {
            if (!before.isEmpty()) {
                return Verdict.waitsFor(before.get(before.size() - 1));
            }
            for (Entry e : queue) {
                if (e.downgrade() && !e.ownerTag().equals(own.ownerTag())) {
                    return Verdict.waitsFor(e); // another owner's downgraded read holds
                }
            }
            return Verdict.GRANTED;
        }
        if (own.downgrade()) {
            return Verdict.GRANTED;
        }
        for (int i = before.size() - 1; i >= 0; i--) {
            Entry e = before.get(i);
            if (e.mode() == Mode.EXCLUSIVE && !e.ownerTag().equals(own.ownerTag())) {
                return Verdict.waitsFor(e);
            }
        }
        return Verdict.GRANTED;
    }

    /** Whether {@code e} in {@code queue} holds now (the grants of the queue as it is). */
    static boolean holds(List<Entry> queue, Entry e) {
        return verdict(queue, e).granted();
    }
}
