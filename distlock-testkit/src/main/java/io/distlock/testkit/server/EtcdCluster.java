package io.distlock.testkit.server;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import org.jspecify.annotations.NullMarked;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real etcd cluster of several {@code etcd} processes on free loopback ports, for failover tests: members can be
 * killed (SIGKILL, as a crash) and restarted with their data. Use it as a JUnit 5 extension ({@code
 * @RegisterExtension static final EtcdCluster etcd = EtcdCluster.ofMembers(3);}) or start and close it by hand. See
 * {@link EtcdServer} for the binary and the timing settings.
 */
@NullMarked
public final class EtcdCluster implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
    private final int size;
    private final List<EtcdServer.Member> members = new ArrayList<>();
    private @Nullable Path home;

    private EtcdCluster(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be positive: " + size);
        }
        this.size = size;
    }

    /** A cluster of {@code size} members that starts before the test class (as an extension) or at {@link #start()}. */
    public static EtcdCluster ofMembers(int size) {
        return new EtcdCluster(size);
    }

    /** Starts every member and waits until each is healthy (a leader is elected). Idempotent. */
    public synchronized EtcdCluster start() {
        if (!members.isEmpty()) {
            for (int i = 0; i < size; i++) {
                restart(i);
            }
            return this;
        }
        Path dir = EtcdServer.tempDir();
        home = dir;
        StringJoiner initial = new StringJoiner(",");
        for (int i = 0; i < size; i++) {
            EtcdServer.Member m =
                    EtcdServer.Member.create("m" + i, RedisServer.freePort(), RedisServer.freePort(), dir);
            members.add(m);
            initial.add(m.name + "=" + m.peerUrl());
        }
        try {
            for (EtcdServer.Member m : members) {
                m.initialCluster = initial.toString();
                m.start();
            }
            for (EtcdServer.Member m : members) {
                m.awaitHealthy(EtcdServer.START_TIMEOUT);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        return this;
    }

    public int size() {
        return size;
    }

    /** Every member's client URL, comma-separated, for a client that fails over between them. */
    public String endpoints() {
        StringJoiner j = new StringJoiner(",");
        for (EtcdServer.Member m : started()) {
            j.add(m.clientUrl());
        }
        return j.toString();
    }

    /** The client URL of member {@code i}. */
    public String endpoint(int i) {
        return member(i).clientUrl();
    }

    /** The member name etcd knows member {@code i} by ({@code m0}, {@code m1}, ...). */
    public String name(int i) {
        return member(i).name;
    }

    public boolean isRunning(int i) {
        return member(i).isRunning();
    }

    /** Kills member {@code i} with SIGKILL, as a crash. */
    public void kill(int i) {
        member(i).kill();
    }

    /** Starts member {@code i} again with its data and waits until it is healthy. */
    public void restart(int i) {
        EtcdServer.Member m = member(i);
        m.clusterState = "existing";
        m.start();
        m.awaitHealthy(EtcdServer.START_TIMEOUT);
    }

    /** The client URLs of the running members, comma-separated. */
    public String runningEndpoints() {
        StringJoiner j = new StringJoiner(",");
        for (EtcdServer.Member m : started()) {
            if (m.isRunning()) {
                j.add(m.clientUrl());
            }
        }
        return j.toString();
    }

    /** Runs {@code etcdctl} (v3 API) against the running members and returns its standard output. */
    public String etcdctl(String... args) {
        return EtcdServer.etcdctlAt(runningEndpoints(), args);
    }

    @Override
    public synchronized void close() {
        for (EtcdServer.Member m : members) {
            m.stop();
        }
        members.clear();
        Path dir = home;
        home = null;
        if (dir != null) {
            RedisServer.deleteTree(dir);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    @Override
    public String toString() {
        return "EtcdCluster[" + (members.isEmpty() ? "not started" : endpoints()) + "]";
    }

    private synchronized List<EtcdServer.Member> started() {
        if (members.isEmpty()) {
            throw new IllegalStateException("the cluster is not started");
        }
        return List.copyOf(members);
    }

    private EtcdServer.Member member(int i) {
        List<EtcdServer.Member> all = started();
        if (i < 0 || i >= all.size()) {
            throw new IndexOutOfBoundsException("member " + i + " of " + all.size());
        }
        return all.get(i);
    }
}
