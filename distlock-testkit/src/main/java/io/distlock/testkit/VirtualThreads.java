package io.distlock.testkit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ThreadFactory;

/** Virtual threads when the running JVM has them (21+), found reflectively so the testkit builds on 17. */
public final class VirtualThreads {
    private VirtualThreads() {}

    /** Whether this JVM can start virtual threads. */
    public static boolean available() {
        return virtualFactory() != null;
    }

    /** A factory of virtual threads, or of platform threads on a JVM without them. */
    public static ThreadFactory factoryOrPlatform() {
        ThreadFactory f = virtualFactory();
        return f != null ? f : Thread::new;
    }

    private static @org.jspecify.annotations.Nullable ThreadFactory virtualFactory() {
        try {
            Object builder = MethodHandles.publicLookup()
                    .findStatic(
                            Thread.class,
                            "ofVirtual",
                            MethodType.methodType(Class.forName("java.lang.Thread$Builder$OfVirtual")))
                    .invoke();
            Class<?> builderType = Class.forName("java.lang.Thread$Builder");
            return (ThreadFactory) MethodHandles.publicLookup()
                    .findVirtual(builderType, "factory", MethodType.methodType(ThreadFactory.class))
                    .invoke(builder);
        } catch (Throwable e) {
            return null;
        }
    }
}
