package io.distlock.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.testkit.Eventually;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Each fault of the proxy, on real loopback sockets in front of an echo server. */
class FaultProxyTest {
    private final List<String> log = new CopyOnWriteArrayList<>();
    private EchoServer echo;
    private FaultProxy proxy;

    @BeforeEach
    void start() throws IOException {
        echo = new EchoServer();
        proxy = FaultProxy.start("echo", "127.0.0.1", echo.port(), (f, t, s) -> log.add((s ? "start " : "end ") + f));
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", proxy.port()), 2000);
        s.setSoTimeout(3000);
        return s;
    }

    private static void send(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
    }

    private static String receive(Socket s, int bytes) throws IOException {
        InputStream in = s.getInputStream();
        byte[] b = in.readNBytes(bytes);
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void noFault_forwardsBothWays() throws IOException {
        try (Socket s = connect()) {
            send(s, "hello");
            assertThat(receive(s, 5)).isEqualTo("hello");
        }
        assertThat(echo.received.get()).isEqualTo(5);
    }

    @Test
    void delay_holdsEachChunk_andHealsByItself() throws Exception {
        try (Socket s = connect()) {
            Fault f = proxy.delay(Duration.ofMillis(200), Duration.ofMillis(50), Duration.ofMillis(1500));
            long start = System.nanoTime();
            send(s, "x");
            assertThat(receive(s, 1)).isEqualTo("x");
            long took = (System.nanoTime() - start) / 1_000_000;
            assertThat(took).isGreaterThanOrEqualTo(400); // there and back

            assertThat(f.awaitHealed(Duration.ofSeconds(3))).isTrue();
            start = System.nanoTime();
            send(s, "y");
            assertThat(receive(s, 1)).isEqualTo("y");
            assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(200);
        }
        assertThat(log).containsExactly("start delay 200+50ms", "end delay 200+50ms");
    }

    @Test
    void blackhole_sendsNothingAndNoFin_thenDeliversWhenHealed() throws Exception {
        try (Socket s = connect()) {
            send(s, "a");
            assertThat(receive(s, 1)).isEqualTo("a");
            try (Fault f = proxy.blackhole(Duration.ofSeconds(10))) {
                send(s, "b");
                s.setSoTimeout(500);
                assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
                assertThat(echo.received.get()).isEqualTo(1);
                // a new connection is accepted but goes nowhere
                try (Socket other = connect()) {
                    send(other, "c");
                    other.setSoTimeout(300);
                    assertThatThrownBy(() -> other.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
                }
                assertThat(f.isActive()).isTrue();
            }
            s.setSoTimeout(3000);
            assertThat(receive(s, 1)).isEqualTo("b"); // delivered after healing, like retransmitted packets
        }
    }

    @Test
    void reset_resetsOpenAndNewConnections_thenAcceptsAgain() throws Exception {
        Socket s = connect();
        send(s, "a");
        assertThat(receive(s, 1)).isEqualTo("a");
        Fault f = proxy.reset(Duration.ofMillis(800));
        assertThatThrownBy(() -> {
                    send(s, "b");
                    s.getInputStream().read();
                    send(s, "c");
                    s.getInputStream().read();
                })
                .isInstanceOf(SocketException.class);
        s.close();
        // a new connection during the fault is reset: at connect already, or at its first read
        assertThatThrownBy(() -> {
                    try (Socket during = connect()) {
                        send(during, "d");
                        during.getInputStream().read();
                    }
                })
                .isInstanceOf(SocketException.class);
        assertThat(f.awaitHealed(Duration.ofSeconds(3))).isTrue();
        try (Socket after = connect()) {
            send(after, "e");
            assertThat(receive(after, 1)).isEqualTo("e");
        }
    }

    @Test
    void halfOpen_closesTheServerSide_keepsTheClientSideQuiet_thenResetsIt() throws Exception {
        Socket s = connect();
        send(s, "a");
        assertThat(receive(s, 1)).isEqualTo("a");
        Fault f = proxy.halfOpen(Duration.ofMillis(1500));
        Eventually.within(Duration.ofSeconds(3), "the server saw the connection end", () -> echo.ended.get() == 1);
        send(s, "b"); // no error: the client side is still open
        s.setSoTimeout(500);
        assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        assertThat(f.awaitHealed(Duration.ofSeconds(3))).isTrue();
        s.setSoTimeout(3000);
        assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketException.class);
        s.close();
    }

    @Test
    void dropReplies_forwardsTheRequest_dropsTheReply_andCloses() throws Exception {
        try (Socket s = connect()) {
            try (Fault f = proxy.dropReplies(Duration.ofSeconds(10))) {
                send(s, "work");
                assertThat(s.getInputStream().read()).isEqualTo(-1); // closed, with no reply
                assertThat(echo.received.get()).isEqualTo(4); // but the server did the work
                assertThat(proxy.droppedReplies()).isEqualTo(1);
            }
        }
        try (Socket after = connect()) {
            send(after, "ok");
            assertThat(receive(after, 2)).isEqualTo("ok");
        }
    }

    @Test
    void dropAfterBytes_silencesMidMessage_thenResetsWhenHealed() throws Exception {
        Socket s = connect();
        Fault f = proxy.dropAfterBytes(3, Duration.ofMillis(1500));
        send(s, "abcdef");
        Eventually.within(Duration.ofSeconds(3), "3 bytes reached the server", () -> echo.received.get() == 3);
        s.setSoTimeout(500);
        // the budget was spent on the way up: the echo of those 3 bytes is dropped, and no FIN comes
        assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        assertThat(echo.received.get()).isEqualTo(3);
        assertThat(f.awaitHealed(Duration.ofSeconds(3))).isTrue();
        s.setSoTimeout(3000);
        assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketException.class);
        s.close();
        try (Socket after = connect()) {
            send(after, "gh");
            assertThat(receive(after, 2)).isEqualTo("gh");
        }
    }

    @Test
    void sameFaultTwice_isRefused_andArgumentsAreChecked() {
        try (Fault f = proxy.blackhole(Duration.ofSeconds(5))) {
            assertThatThrownBy(() -> proxy.blackhole(Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("already");
        }
        assertThatThrownBy(() -> proxy.dropAfterBytes(-1, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> proxy.blackhole(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-1S");
        assertThatThrownBy(() -> FaultProxy.start("x", "127.0.0.1", 0, FaultLog.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("targetPort out of range: 0");
    }
}
