package io.distlock.spring.boot;

import io.distlock.LockClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * One backend the starter can build a client for: present when its module is on the class path. {@link #select}
 * picks the one to build.
 */
interface DistlockBackend {

    DistlockProperties.Backend id();

    /** What configures this backend in the application (for messages), or null when nothing does. */
    @Nullable
    String configuredBy();

    /** Builds the client; called once, for the selected backend only. */
    LockClient create();

    /** The backend named in the tags and the endpoint: {@code redis}, {@code in-memory}, ... */
    static String tag(DistlockProperties.Backend backend) {
        return backend.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The tag of a client built elsewhere, from its class name ({@code RedisLockClient} gives {@code redis}). */
    static String tag(LockClient client) {
        String simple = client.getClass().getSimpleName();
        String base = simple.endsWith("LockClient") ? simple.substring(0, simple.length() - 10) : simple;
        return base.equals("InMemory") ? "in-memory" : base.toLowerCase(Locale.ROOT);
    }

    /**
     * The explicit backend if one is set (its module must be present), else the only configured one.
     *
     * @throws IllegalStateException naming the candidates when none or several are configured, or the explicit one's
     *     module is missing
     */
    static DistlockBackend select(DistlockProperties.@Nullable Backend explicit, List<DistlockBackend> present) {
        if (explicit != null) {
            for (DistlockBackend b : present) {
                if (b.id() == explicit) {
                    return b;
                }
            }
            throw new IllegalStateException("distlock.backend=" + tag(explicit) + " but its module (distlock-"
                    + (explicit == DistlockProperties.Backend.IN_MEMORY ? "testkit" : tag(explicit))
                    + ") is not on the class path");
        }
        List<DistlockBackend> configured = new ArrayList<>();
        List<String> reasons = new ArrayList<>();
        for (DistlockBackend b : present) {
            String by = b.configuredBy();
            if (by != null) {
                configured.add(b);
                reasons.add(tag(b.id()) + " (" + by + ")");
            }
        }
        if (configured.size() == 1) {
            return configured.get(0);
        }
        if (configured.isEmpty()) {
            List<String> modules = new ArrayList<>();
            for (DistlockBackend b : present) {
                modules.add(tag(b.id()));
            }
            throw new IllegalStateException("distlock: no backend is configured (modules present: " + modules
                    + "): configure one (spring.data.redis.* or distlock.redis.uri, a DataSource,"
                    + " distlock.zookeeper.connect-string or a CuratorFramework bean, distlock.etcd.endpoints),"
                    + " set distlock.backend, or distlock.enabled=false");
        }
        throw new IllegalStateException("distlock: several backends are configured: " + String.join(", ", reasons)
                + "; choose one with distlock.backend");
    }
}
