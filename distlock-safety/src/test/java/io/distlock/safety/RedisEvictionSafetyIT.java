package io.distlock.safety;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** R1 (eviction) on standalone Redis servers of its own: maxmemory 2 MB, volatile-lru and allkeys-lru. */
class RedisEvictionSafetyIT {

    @Test
    @Tag("tier2")
    void r1_eviction_volatileLru() throws Exception {
        RedisEvictionScenarios.r1Eviction(SafetySeeds.seed(), "volatile-lru");
    }

    @Test
    @Tag("tier2")
    void r1_eviction_allkeysLru() throws Exception {
        RedisEvictionScenarios.r1Eviction(SafetySeeds.seed(), "allkeys-lru");
    }
}
