package io.distlock.zookeeper;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.api.CuratorListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.DefaultZookeeperFactory;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Overview
 *
 * Role. Watches the connection and counts its trouble in an epoch. Holds last as long as the ZooKeeper session; every
 * OwnEntry remembers the epoch it was granted in, and a hold of an earlier epoch is presumed lost (Curator's advice:
 * after SUSPENDED a lock must be presumed lost), so release, hand-off and renew decide that without a round trip and
 * without asking Curator for the handle, which Curator holds back while it resets the session.
 *
 * Hearing of trouble. The epoch is bumped on every Disconnected or Expired event, on the ZooKeeper handle's event
 * thread as the event is delivered, and the engine is asked to check its holds at once (checkNow). The events come
 * through the handle's own watcher when this library built the Curator client (HandleFactory), else through Curator's
 * event listener. Curator's connection states come later, from Curator's own thread, which any slow listener holds
 * up; a holder cut off at two thirds of the session timeout could then be told only after the server expired its
 * session and granted the lock to a waiter. On Expired, Curator closes the handle before it passes the event on, and
 * that close ends the session on the server at once if the connection is still up (an expiry reported by the client
 * itself, as by ZooKeeper's injectSessionExpiration, which Curator uses too): the server may then grant the lock
 * before any Curator listener runs, and only the handle's own watcher hears of the expiry first.
 *
 * Curator's states. SUSPENDED and LOST still count if the connection is down as they come; once it is back they must
 * not end the holds granted since, so they only have every hold checked (a LOST may still be news: Curator's reset
 * of a connected client closes the session with no Disconnected or Expired event), and the check's read ends just the
 * holds of an earlier session. A namespaced Curator client (usingNamespace) has no event listener to offer: the store
 * then hears trouble through Curator's connection states alone, and counts every one of them.
 *
 * Ordering. On trouble the mirrors are dropped before the epoch is bumped: an attempt that reads the new epoch must
 * not be granted from a mirror of the old connection (its hold would carry the new epoch and never be presumed lost).
 * Nothing on the event thread waits: checkNow only schedules the engine's check.
 *
 * Reconnect. After RECONNECTED a background thread adds the waiters' watches again (ZkQueueMirrors.watchAgain) and
 * deletes the entries of abandons that could not finish (OwnEntries.retryUncertain).
 */
/** Watches the ZooKeeper connection for the lock store; see the overview comment in the source. */
final class ZkSession {
    private static final Logger log = LoggerFactory.getLogger(ZkSession.class);

    private final ZkOps ops;
    private final CuratorFramework curator;
    private final ZkQueueMirrors mirrors;
    private final OwnEntries entries;
    private final AtomicLong epoch = new AtomicLong();
    private final ExecutorService background;

    private final ConnectionStateListener stateListener = this::stateChanged;
    /** Hears the handle's connection events, unless a HandleFactory hands them over first. */
    private final CuratorListener eventListener = (client, event) -> {
        if (event.getType() == CuratorEventType.WATCHED) {
            connectionEvent(event.getWatchedEvent());
        }
    };

    /** Whether the session listens to Curator's event listener (a Curator client handed in, not namespaced). */
    private final boolean hearsThroughCurator;
    /**
     * Whether the handle's connection events reach the session (connectionEvent); if not, Curator's connection states
     * are all it hears.
     */
    private final boolean hearsEvents;
    /** The engine's "check your holds now", run on connection trouble so listeners hear of a loss at once. */
    private volatile Runnable checkNow = () -> {};

    /**
     * Starts listening to the Curator client.
     *
     * @param handles the factory that made the Curator client's ZooKeeper handles, if this library built it: the
     *     session then hears connection events before Curator does
     */
    ZkSession(ZkOps ops, ZkQueueMirrors mirrors, OwnEntries entries, @Nullable HandleFactory handles) {
        this.ops = ops;
        this.curator = ops.curator();
        this.mirrors = mirrors;
        this.entries = entries;
        this.background = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "distlock-zookeeper-background");
            t.setDaemon(true);
            return t;
        });
        curator.getConnectionStateListenable().addListener(stateListener);
        boolean throughCurator = false;
        if (handles != null) {
            handles.session = this;
        } else {
            try {
                curator.getCuratorListenable().addListener(eventListener);
                throughCurator = true;
            } catch (UnsupportedOperationException e) {
                // a namespaced facade (usingNamespace) offers no event listener: Curator's connection states only
                log.debug("distlock: {} has no event listener; connection trouble heard through its states", curator);
            }
        }
        this.hearsThroughCurator = throughCurator;
        this.hearsEvents = handles != null || throughCurator;
    }

    /** The number of connection troubles seen so far. */
    long epoch() {
        return epoch.get();
    }

    /** Sets the engine's "check your holds now". */
    void onPossibleLoss(Runnable checkNow) {
        this.checkNow = checkNow;
    }

    /** Stops hearing the Curator client. */
    void stopListening() {
        curator.getConnectionStateListenable().removeListener(stateListener);
        if (hearsThroughCurator) {
            curator.getCuratorListenable().removeListener(eventListener);
        }
    }

    /** Ends the background thread. */
    void stopBackground() {
        background.shutdownNow();
    }

    private void stateChanged(CuratorFramework client, ConnectionState state) {
        switch (state) {
            case SUSPENDED, LOST -> {
                // as a rule heard already from the event thread; once connected again, only a check (see Curator's
                // states): Curator's reset() of a connected client (a changed connect string, a reset by the
                // application) reports LOST after the new session is up
                if (!hearsEvents || !curator.getZookeeperClient().isConnected()) {
                    connectionTrouble();
                } else {
                    checkNow.run();
                }
            }
            case RECONNECTED -> submit(this::afterReconnect);
            default -> {}
        }
    }

    /** A connection event of the ZooKeeper handle, on its event thread; see Hearing of trouble in the overview. */
    private void connectionEvent(WatchedEvent event) {
        Watcher.Event.KeeperState state = event.getState();
        if (event.getType() == Watcher.Event.EventType.None
                && (state == Watcher.Event.KeeperState.Disconnected || state == Watcher.Event.KeeperState.Expired)) {
            connectionTrouble();
        }
    }

    /**
     * Every hold is presumed lost from now on. A second report of the same trouble, while still disconnected, costs
     * nothing: no hold is granted meanwhile, and an attempt that spans the trouble gives a hold presumed lost anyway.
     * Often runs on ZooKeeper's event thread, so nothing here waits.
     */
    private void connectionTrouble() {
        mirrors.forgetAll(); // before the epoch: see Ordering
        epoch.incrementAndGet();
        checkNow.run(); // renew now reports every hold of the old epoch gone, without a round trip
    }

    private void afterReconnect() {
        mirrors.watchAgain();
        entries.retryUncertain();
    }

    private void submit(Runnable task) {
        if (ops.closed()) {
            return;
        }
        try {
            background.execute(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * Makes the ZooKeeper handles of a Curator client this library builds, each with a watcher that hands connection
     * events to the session before Curator's own watcher gets them: Curator answers Expired by closing the handle,
     * which ends the session on the server at once (so a waiter may be granted the lock) if the connection is still
     * up, and only then passes the event on.
     */
    static final class HandleFactory implements ZookeeperFactory {
        private static final ZookeeperFactory DEFAULT = new DefaultZookeeperFactory();
        /** Set once the store exists; the Curator client is started after that. */
        private volatile @Nullable ZkSession session;

        @Override
        public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher curators, boolean canBeReadOnly)
                throws Exception {
            return DEFAULT.newZooKeeper(connectString, sessionTimeout, sessionFirst(curators), canBeReadOnly);
        }

        @Override
        public ZooKeeper newZooKeeper(
                String connectString,
                int sessionTimeout,
                Watcher curators,
                boolean canBeReadOnly,
                @Nullable ZKClientConfig config)
                throws Exception {
            // the default would build a handle with Curator's watcher alone when a config is given
            return DEFAULT.newZooKeeper(connectString, sessionTimeout, sessionFirst(curators), canBeReadOnly, config);
        }

        /** Curator's watcher, with the session told of each event first. */
        private Watcher sessionFirst(Watcher curators) {
            return event -> {
                ZkSession s = session;
                try {
                    if (s != null) {
                        s.connectionEvent(event);
                    }
                } finally {
                    curators.process(event);
                }
            };
        }
    }
}
