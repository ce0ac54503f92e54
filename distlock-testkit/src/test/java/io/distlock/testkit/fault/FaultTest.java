package io.distlock.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The window a one-shot fault logs covers its whole apply step, also when the step fails. */
class FaultTest {

    @Test
    void oneShot_logsItsStartBeforeApplying_andItsEndAfter() {
        List<String> seen = new CopyOnWriteArrayList<>();
        FaultLog log = (name, target, start) -> seen.add((start ? "start " : "end ") + name + " " + target);

        Fault f = Fault.oneShot("revoke", "etcd:p/", () -> seen.add("applied"), log);

        assertThat(seen).containsExactly("start revoke etcd:p/", "applied", "end revoke etcd:p/");
        assertThat(f.isActive()).isFalse();
    }

    @Test
    void oneShot_whoseApplyFails_logsItsEnd_andThrows() {
        List<String> seen = new CopyOnWriteArrayList<>();
        FaultLog log = (name, target, start) -> seen.add((start ? "start " : "end ") + name);

        assertThatThrownBy(() -> Fault.oneShot(
                        "kill",
                        "db",
                        () -> {
                            throw new IllegalStateException("no such session");
                        },
                        log))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("no such session");
        assertThat(seen).containsExactly("start kill", "end kill");
    }
}
