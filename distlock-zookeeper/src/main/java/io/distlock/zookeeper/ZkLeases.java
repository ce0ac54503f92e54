package io.distlock.zookeeper;

import io.distlock.spi.HeldClaim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/*
 * Overview
 *
 * Role. The renew step. A hold lasts as long as the ZooKeeper session: there is no lease on the server to extend, so
 * renew checks that each hold is still there and reports those that are gone.
 *
 * Without a round trip. While the client is disconnected no hold can be vouched for: all are reported gone. A hold
 * whose entry is not known here, was granted in an earlier connection epoch (ZkSession), or carries another token than
 * the entry's grant is gone too. When that decides every hold, renew does not touch the handle: Curator makes its
 * callers wait for it while it resets the session, which on Expired includes closing the old handle, a round trip.
 *
 * With one. The remaining entries are read in read-only multis of at most MAX_OPS_PER_MULTI reads, one round trip per
 * batch, each read answered on its own. An entry is alive when it exists with the czxid of its grant and the current
 * session as its ephemeral owner; an entry of an earlier session fails that check.
 *
 * Timing. The engine calls renew every third of its watchdog lease, and the client's builder keeps that lease at a
 * third of the session timeout: a lost session is told within a ninth of the session timeout after the client saw it,
 * or at once after a connection event, which has the engine check its holds (ZkSession's checkNow).
 */
/** The renew step of the lock store; see the overview comment in the source. */
final class ZkLeases {
    private static final int MAX_OPS_PER_MULTI = 1000;

    private final CuratorFramework curator;
    private final OwnEntries entries;
    private final ZkSession session;

    ZkLeases(ZkOps ops, OwnEntries entries, ZkSession session) {
        this.curator = ops.curator();
        this.entries = entries;
        this.session = session;
    }

    /** The holds of {@code holds} that are gone; {@code lease} is not used, the session is the lease. */
    Set<HeldClaim> renew(Collection<HeldClaim> holds, Duration lease) {
        return ZkOps.call("renew", () -> {
            Set<HeldClaim> gone = new HashSet<>();
            long epochNow = session.epoch();
            if (!curator.getZookeeperClient().isConnected()) {
                gone.addAll(holds); // a suspended connection cannot vouch for any hold
                return gone;
            }
            List<HeldClaim> toCheck = new ArrayList<>();
            List<OwnEntry> checked = new ArrayList<>();
            for (HeldClaim h : holds) {
                OwnEntry e = entries.get(new EntryId(h.key().name(), h.owner().value()));
                if (e == null || e.epoch() != epochNow || e.token() != h.fencingToken()) {
                    gone.add(h);
                } else {
                    toCheck.add(h);
                    checked.add(e);
                }
            }
            if (toCheck.isEmpty()) {
                return gone; // decided without the handle: see Without a round trip
            }
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            long sessionId = zk.getSessionId();
            String namespace = curator.getNamespace();
            for (int from = 0; from < toCheck.size(); from += MAX_OPS_PER_MULTI) {
                int to = Math.min(toCheck.size(), from + MAX_OPS_PER_MULTI);
                List<Op> reads = new ArrayList<>(to - from);
                for (int i = from; i < to; i++) {
                    reads.add(Op.getData(
                            ZKPaths.fixForNamespace(namespace, checked.get(i).path())));
                }
                List<OpResult> results = zk.multi(reads);
                for (int i = from; i < to; i++) {
                    OpResult r = results.get(i - from);
                    OwnEntry e = checked.get(i);
                    boolean alive = r instanceof OpResult.GetDataResult data
                            && data.getStat().getCzxid() == e.czxid()
                            && data.getStat().getEphemeralOwner() == sessionId;
                    if (!alive) {
                        gone.add(toCheck.get(i));
                    }
                }
            }
            return gone;
        });
    }
}
