package io.distlock.redis;

/** The Lua scripts of {@link RedLockStore}, one per step on one node, shipped as resources beside this class. */
final class RedLockScripts {
    static final LuaScript ACQUIRE = LuaScript.load("redlock-acquire.lua");
    static final LuaScript FENCE = LuaScript.load("redlock-fence.lua");
    static final LuaScript RENEW = LuaScript.load("redlock-renew.lua");
    static final LuaScript JOIN = LuaScript.load("redlock-join.lua");
    static final LuaScript RELEASE = LuaScript.load("redlock-release.lua");
    static final LuaScript FORCE_RELEASE = LuaScript.load("redlock-force-release.lua");
    static final LuaScript INSPECT = LuaScript.load("redlock-inspect.lua");

    private RedLockScripts() {}
}
