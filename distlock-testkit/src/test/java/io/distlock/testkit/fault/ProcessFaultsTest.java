package io.distlock.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Pause and kill on a real child process (a shell that counts), found by the port named on its command line. */
class ProcessFaultsTest {

    @Test
    void pause_stopsTheProcess_andHealsByItself() throws Exception {
        Path out = Files.createTempFile("counter", ".txt");
        // a process that appends a line every 50 ms; "--port 47123" only names it
        Process p = new ProcessBuilder(
                        "bash", "-c", "while true; do echo x >> " + out + "; sleep 0.05; done", "--port", "47123")
                .start();
        List<String> log = new CopyOnWriteArrayList<>();
        try {
            long pid = ProcessFaults.pidOfServerOn(47123);
            assertThat(pid).isEqualTo(p.pid());
            Thread.sleep(300);
            Fault f = ProcessFaults.pause(pid, "counter", Duration.ofMillis(800), (n, t, s) -> log.add(n + s));
            Thread.sleep(200);
            long during = lines(out);
            Thread.sleep(400);
            assertThat(lines(out)).isEqualTo(during); // stopped
            assertThat(f.awaitHealed(Duration.ofSeconds(3))).isTrue();
            Thread.sleep(300);
            assertThat(lines(out)).isGreaterThan(during); // running again
            assertThat(log).containsExactly("pausetrue", "pausefalse");

            ProcessFaults.kill(pid, "counter", FaultLog.NONE);
            // kill returns once the process has exited; the Process object learns it from its own reaper thread
            assertThat(p.waitFor(1, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isEqualTo(137); // 128 + SIGKILL
        } finally {
            p.destroyForcibly();
            Files.deleteIfExists(out);
        }
        assertThatThrownBy(() -> ProcessFaults.pidOfServerOn(47124))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no process of this JVM serves port 47124");
    }

    @Test
    void pidOfServerOn_findsTheServer_notItsForkThatSharesItsCommandLine() throws Exception {
        // a subshell is a fork of bash with bash's command line, as a shell's child is before its exec
        Process p = new ProcessBuilder("bash", "-c", "( sleep 30; true ) & wait", "--port", "47126").start();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (p.descendants().findAny().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(p.descendants().count()).as("the fork is there").isPositive();
            assertThat(ProcessFaults.pidOfServerOn(47126)).isEqualTo(p.pid());
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    @Test
    void pidOfServerOn_findsAServerThatRetitledItself_notOneOnALongerPort() throws Exception {
        // as redis-server does: its arguments become one title that names its address
        Process p = new ProcessBuilder("bash", "-c", "exec -a 'redis-server *:47125' sleep 30").start();
        Process other = new ProcessBuilder("bash", "-c", "exec -a 'redis-server 127.0.0.1:471250' sleep 30").start();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            long pid = -1;
            while (pid < 0 && System.nanoTime() < deadline) {
                try {
                    pid = ProcessFaults.pidOfServerOn(47125);
                } catch (IllegalStateException e) {
                    Thread.sleep(20); // bash has not run its exec yet
                }
            }
            assertThat(pid).isEqualTo(p.pid());
        } finally {
            p.destroyForcibly();
            other.destroyForcibly();
        }
    }

    private static long lines(Path f) throws IOException {
        return Files.readAllLines(f).size();
    }
}
