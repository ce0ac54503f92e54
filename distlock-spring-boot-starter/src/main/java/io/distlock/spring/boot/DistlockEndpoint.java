package io.distlock.spring.boot;

import io.distlock.LockClient;
import io.distlock.LockInfo;
import io.distlock.spring.HeldLocks;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The {@code distlock} actuator endpoint.
 *
 * <ul>
 *   <li>{@code GET /actuator/distlock}: this instance's holds taken through {@code @DistributedLock} and {@code
 *       LockTemplate} (name, kind, token, thread, held for, fixed lease left, lost);
 *   <li>{@code GET /actuator/distlock/{name}}: the store's view of one name, any owner's ({@link LockInfo}); 404
 *       when the name is not in use;
 *   <li>{@code DELETE /actuator/distlock/{name}}: removes the name's lock hold whoever owns it, only when {@code
 *       distlock.actuator.force-unlock-enabled=true} (403 otherwise). The owner finds its hold lost; fencing tokens
 *       still protect resources.
 * </ul>
 */
@Endpoint(id = "distlock")
public class DistlockEndpoint {
    /** The status of a refused force-unlock. */
    public static final int STATUS_FORBIDDEN = 403;

    private final LockClient client;
    private final HeldLocks held;
    private final String backend;
    private final boolean forceUnlockEnabled;

    public DistlockEndpoint(LockClient client, HeldLocks held, String backend, boolean forceUnlockEnabled) {
        this.client = client;
        this.held = held;
        this.backend = backend;
        this.forceUnlockEnabled = forceUnlockEnabled;
    }

    /**
     * This instance's holds.
     *
     * @param backend the backend's name
     * @param clientId the client's id in the store (the prefix of its owner ids)
     * @param holds the holds, oldest first
     */
    public record Holds(String backend, String clientId, List<HeldLocks.Hold> holds) {}

    @ReadOperation
    public Holds holds() {
        return new Holds(backend, client.clientId(), held.holds());
    }

    @ReadOperation
    public @Nullable LockInfo inspect(@Selector String name) {
        return client.admin().inspect(name).orElse(null);
    }

    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> forceUnlock(@Selector String name) {
        if (!forceUnlockEnabled) {
            return new WebEndpointResponse<>(
                    Map.of("error", "force-unlock is disabled: set distlock.actuator.force-unlock-enabled=true"),
                    STATUS_FORBIDDEN);
        }
        return client.admin()
                .forceUnlock(name)
                .map(info -> new WebEndpointResponse<Map<String, Object>>(Map.of("removed", info)))
                .orElseGet(() -> new WebEndpointResponse<>(Map.of("removed", "nothing: nobody held '" + name + "'")));
    }
}
