package io.distlock.testkit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ThreadFactory;

/** Virtual threads when the running JVM has them (21+), found reflectively so the testkit builds on 17. */
public final class VirtualThreads {
    /**
     * The system property that, set to {@code true}, makes a JVM without virtual threads fail the virtual-thread
     * tests instead of running them on platform threads: the test command sets it on its JDK 21+ step.
     */
    public static final String REQUIRED_PROPERTY = "distlock.virtualThreads.required";

    private VirtualThreads() {}

    /** Whether this JVM can start virtual threads. */
    public static boolean available() {
        return virtualFactory() != null;
    }

    /** Whether {@value #REQUIRED_PROPERTY} asks for real virtual threads. */
    public static boolean required() {
        return Boolean.getBoolean(REQUIRED_PROPERTY);
    }

    /** A factory of virtual threads, or of platform threads on a JVM without them. */
    public static ThreadFactory factoryOrPlatform() {
        ThreadFactory f = virtualFactory();
        return f != null ? f : Thread::new;
    }

    /** Whether {@code thread} is a virtual thread ({@code Thread.isVirtual()} on 21+; always false on 17). */
    public static boolean isVirtual(Thread thread) {
        try {
            return (boolean) MethodHandles.publicLookup()
                    .findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class))
                    .invoke(thread);
        } catch (NoSuchMethodException e) {
            return false;
        } catch (Throwable e) {
            throw new IllegalStateException("Thread.isVirtual() failed on " + thread, e);
        }
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
