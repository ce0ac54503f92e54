package io.distlock.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** The parent's handle on one {@link DemoWorker} child JVM: its stdin, its stdout lines, the tail of its stderr. */
final class WorkerProcess implements AutoCloseable {

    /** A line a worker printed on stdout. */
    record Line(int worker, String text) {}

    private static final int STDERR_TAIL = 20;

    private final int index;
    private final Process process;
    private final PrintWriter stdin;
    private final Deque<String> stderrTail = new ArrayDeque<>();

    private WorkerProcess(int index, Process process, BlockingQueue<Line> lines) {
        this.index = index;
        this.process = process;
        this.stdin = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        pump(process.getInputStream(), "worker-" + index + "-stdout", text -> lines.add(new Line(index, text)));
        pump(process.getErrorStream(), "worker-" + index + "-stderr", text -> {
            synchronized (stderrTail) {
                stderrTail.addLast(text);
                if (stderrTail.size() > STDERR_TAIL) {
                    stderrTail.removeFirst();
                }
            }
        });
    }

    /** Starts worker {@code index} on this JVM's class path; its stdout lines go to {@code lines}. */
    static WorkerProcess start(int index, List<String> args, Map<String, String> env, BlockingQueue<Line> lines) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // small, quick-starting JVMs: several of them share the machine with the database
        command.addAll(List.of("-Xmx192m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(DemoWorker.class.getName());
        command.addAll(args);
        command.addAll(List.of("--worker", Integer.toString(index)));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        try {
            return new WorkerProcess(index, pb.start(), lines);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start worker process " + index, e);
        }
    }

    int index() {
        return index;
    }

    long pid() {
        return process.pid();
    }

    void send(String line) {
        stdin.println(line);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** The exit code, or -1 while it runs. */
    int exitCode() {
        return process.isAlive() ? -1 : process.exitValue();
    }

    List<String> stderrTail() {
        synchronized (stderrTail) {
            return List.copyOf(stderrTail);
        }
    }

    /** Asks the worker to exit, waits a little, then kills it if it is still there. */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                send("EXIT");
                stdin.close();
                if (!process.waitFor(15, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    var unused = process.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    private interface Sink {
        void accept(String line);
    }

    private static void pump(InputStream stream, String name, Sink sink) {
        Thread t = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = r.readLine()) != null) {
                            sink.accept(line);
                        }
                    } catch (IOException e) {
                        // the process ended
                    }
                },
                name);
        t.setDaemon(true);
        t.start();
    }
}
