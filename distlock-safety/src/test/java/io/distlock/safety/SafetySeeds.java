package io.distlock.safety;

/**
 * The seed of a run: {@code -Dsafety.seed=N} replays one; otherwise a fresh one each run (printed by every scenario).
 */
final class SafetySeeds {
    private SafetySeeds() {}

    static long seed() {
        String fixed = System.getProperty("safety.seed");
        return fixed != null && !fixed.isBlank() ? Long.parseLong(fixed.trim()) : System.nanoTime() & 0xFFFFFFFL;
    }
}
