package io.distlock.safety;

import io.distlock.testkit.Eventually;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A {@link SafetyWorker} JVM: its pid (for pause and kill), and its output, line by line. */
final class WorkerProcess implements AutoCloseable {
    final String name;
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private WorkerProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = r.readLine()) != null) {
                            lines.add(line);
                        }
                    } catch (IOException e) {
                        lines.add("READ FAILED " + e);
                    }
                },
                "worker-output-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts a worker JVM on this JVM's class path; {@code args} as {@link SafetyWorker} reads them. */
    static WorkerProcess start(String name, List<String> args) {
        return start(name, args, Map.of());
    }

    /** As {@link #start(String, List)}, with {@code environment} added to the worker's (a fake clock's, say). */
    static WorkerProcess start(String name, List<String> args, Map<String, String> environment) {
        return start(name, args, environment, List.of(), List.of());
    }

    /**
     * As {@link #start(String, List, Map)}, the JVM run by {@code launcher} (say {@code ip netns exec <ns>}, which
     * execs it, so the pid is the JVM's) with {@code jvmOptions} added.
     */
    static WorkerProcess start(
            String name,
            List<String> args,
            Map<String, String> environment,
            List<String> launcher,
            List<String> jvmOptions) {
        List<String> command = new ArrayList<>(launcher);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(SafetyWorker.class.getName());
        command.addAll(args);
        try {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().putAll(environment);
            return new WorkerProcess(name, pb.start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    void awaitLine(String prefix, Duration bound) {
        Eventually.within(
                bound,
                name + " printed " + prefix + "; output so far: " + lines,
                () -> lines.stream().anyMatch(l -> l.startsWith(prefix)) || !process.isAlive() && hasLine(prefix));
        if (!hasLine(prefix)) {
            throw new AssertionError(name + " ended without printing " + prefix + ": " + lines);
        }
    }

    private boolean hasLine(String prefix) {
        return lines.stream().anyMatch(l -> l.startsWith(prefix));
    }

    /** Waits for the JVM to end; kills it and fails if it does not within {@code bound}. */
    int waitFor(Duration bound) throws InterruptedException {
        if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(name + " did not finish within " + bound + "; output: " + lines);
        }
        Thread.sleep(50); // let the reader drain
        return process.exitValue();
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void close() {
        // a stopped JVM must be continued to die of SIGKILL promptly; harmless on a running one
        try {
            new ProcessBuilder("kill", "-CONT", Long.toString(process.pid()))
                    .start()
                    .waitFor(5, TimeUnit.SECONDS);
        } catch (IOException e) {
            // ending it anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process.destroyForcibly();
    }
}
