package io.distlock.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A child JVM running {@link ChildWorker} on this JVM's class path, its output collected line by line. */
public final class ChildProcess implements AutoCloseable {
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private ChildProcess(Process process) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("READ FAILED " + e);
            }
        });
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code ChildWorker} with these arguments. */
    public static ChildProcess start(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ChildWorker.class.getName());
        command.addAll(List.of(args));
        try {
            return new ChildProcess(
                    new ProcessBuilder(command).redirectErrorStream(true).start());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits for the process to end; kills it and fails if it does not within {@code bound}. */
    public int waitFor(Duration bound) throws InterruptedException {
        if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("child JVM did not finish within " + bound + "; output: " + lines);
        }
        Thread.sleep(50); // let the reader drain
        return process.exitValue();
    }

    /** Waits until the child printed {@code line}. */
    public void awaitLine(String line, Duration bound) {
        Eventually.within(bound, "child printed " + line + "; output so far: " + lines, () -> lines.contains(line));
    }

    public List<String> lines() {
        return List.copyOf(lines);
    }

    /** Kills the JVM at once, as a crash would: no shutdown hooks, no releases. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        var unused = process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
