package io.distlock.cli;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A {@link SharedCounter} as znodes {@code /distlock-demo/<id>} holding {@code value:fence}. The fenced write is a
 * compare-and-set on the znode's version that first checks the fence, retried when another write came in between, so
 * ZooKeeper refuses a stale token; the unfenced write is a blind {@code setData}.
 */
final class ZooKeeperCounter implements SharedCounter {
    private static final String ROOT = "/distlock-demo/";

    private final CuratorFramework curator;

    ZooKeeperCounter(String connectString) {
        this.curator = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .connectionTimeoutMs(5_000)
                .sessionTimeoutMs(30_000)
                .retryPolicy(new ExponentialBackoffRetry(50, 5))
                .build();
        curator.start();
        try {
            if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
                curator.close();
                throw new IllegalStateException("ZooKeeper not reachable at " + connectString);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            curator.close();
            throw new IllegalStateException("interrupted while connecting to ZooKeeper", e);
        }
    }

    @Override
    public void reset(String id) {
        call(() -> {
            byte[] zero = encode(0, 0);
            try {
                curator.create().creatingParentsIfNeeded().forPath(ROOT + id, zero);
            } catch (KeeperException.NodeExistsException e) {
                curator.setData().forPath(ROOT + id, zero);
            }
            return true;
        });
    }

    @Override
    public long read(String id) {
        return call(() -> decode(curator.getData().forPath(ROOT + id))[0]);
    }

    @Override
    public void write(String id, long value) {
        call(() -> {
            long fence = decode(curator.getData().forPath(ROOT + id))[1];
            curator.setData().forPath(ROOT + id, encode(value, fence)); // blind: no version check
            return true;
        });
    }

    @Override
    public boolean writeFenced(String id, long value, long token) {
        return call(() -> {
            while (true) {
                Stat stat = new Stat();
                long fence = decode(curator.getData().storingStatIn(stat).forPath(ROOT + id))[1];
                if (token < fence) {
                    return false;
                }
                try {
                    curator.setData().withVersion(stat.getVersion()).forPath(ROOT + id, encode(value, token));
                    return true;
                } catch (KeeperException.BadVersionException e) {
                    // another write came in between: check the fence again
                }
            }
        });
    }

    @Override
    public long fence(String id) {
        return call(() -> decode(curator.getData().forPath(ROOT + id))[1]);
    }

    @Override
    public void delete(String id) {
        call(() -> {
            try {
                curator.delete().forPath(ROOT + id);
            } catch (KeeperException.NoNodeException e) {
                // already gone
            }
            return true;
        });
    }

    @Override
    public void close() {
        curator.close();
    }

    private static byte[] encode(long value, long fence) {
        return (value + ":" + fence).getBytes(StandardCharsets.UTF_8);
    }

    private static long[] decode(byte[] data) {
        String s = new String(data, StandardCharsets.UTF_8);
        int colon = s.indexOf(':');
        return new long[] {Long.parseLong(s.substring(0, colon)), Long.parseLong(s.substring(colon + 1))};
    }

    private interface Call<T> {
        T run() throws Exception;
    }

    private static <T> T call(Call<T> c) {
        try {
            return c.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (Exception e) {
            throw new IllegalStateException("demo counter in ZooKeeper failed: " + e.getMessage(), e);
        }
    }
}
