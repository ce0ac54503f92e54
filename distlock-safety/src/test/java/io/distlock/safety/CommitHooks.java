package io.distlock.safety;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/*
 * Overview
 *
 * A JDBC client whose spec names a commit hook ({@code commitHook=<name>}) gets its DataSource wrapped: each
 * connection runs the hook registered under that name just before it sends a commit or a rollback, on the thread that
 * commits. A scenario registers the hook, arms it for one thread, and the hook disarms itself at the first commit: G6
 * turns a reply-dropping fault on there, so that the reply lost is the commit's (applied by the server), not that of
 * an earlier statement of the transaction (whose loss rolls the transaction back).
 */
/** Commit hooks for JDBC clients made from a spec (see the overview comment in the source). */
final class CommitHooks {
    /** A hook armed for one thread at a time. */
    static final class Hook {
        private final Runnable action;
        private volatile Thread armedFor;

        Hook(Runnable action) {
            this.action = action;
        }

        /** Runs the action at the next commit or rollback of the calling thread. */
        void arm() {
            armedFor = Thread.currentThread();
        }

        /** Whether the hook is still armed (no commit ran since {@link #arm}); disarms it. */
        boolean disarm() {
            boolean was = armedFor != null;
            armedFor = null;
            return was;
        }

        void beforeCommit() {
            if (armedFor == Thread.currentThread()) {
                armedFor = null;
                action.run();
            }
        }
    }

    private static final Map<String, Hook> HOOKS = new ConcurrentHashMap<>();

    private CommitHooks() {}

    /** Registers {@code hook} under {@code name}, for clients whose spec says {@code commitHook=name}. */
    static void register(String name, Hook hook) {
        HOOKS.put(name, hook);
    }

    static void unregister(String name) {
        HOOKS.remove(name);
    }

    /** {@code pool} with the hook {@code name} run before every commit and rollback of its connections. */
    static DataSource wrap(DataSource pool, String name) {
        InvocationHandler onConnection = (proxy, m, args) -> {
            Object r = invoke(pool, m, args);
            if (r instanceof Connection c && m.getName().equals("getConnection")) {
                return hooked(c, name);
            }
            return r;
        };
        return (DataSource) Proxy.newProxyInstance(
                CommitHooks.class.getClassLoader(), new Class<?>[] {DataSource.class}, onConnection);
    }

    private static Connection hooked(Connection c, String name) {
        InvocationHandler h = (proxy, m, args) -> {
            if (m.getName().equals("commit") || m.getName().equals("rollback")) {
                Hook hook = HOOKS.get(name);
                if (hook != null) {
                    hook.beforeCommit();
                }
            }
            return invoke(c, m, args);
        };
        return (Connection)
                Proxy.newProxyInstance(CommitHooks.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
    }

    private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
