package io.distlock.testkit;

import io.distlock.LockListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/** A {@link LockListener} that records the tokens of each event, for assertions. */
public final class RecordingLockListener implements LockListener {
    private final List<Long> acquired = new CopyOnWriteArrayList<>();
    private final List<Long> released = new CopyOnWriteArrayList<>();
    private final List<Long> lost = new CopyOnWriteArrayList<>();

    @Override
    public void acquired(String name, long fencingToken) {
        acquired.add(fencingToken);
    }

    @Override
    public void released(String name, long fencingToken) {
        released.add(fencingToken);
    }

    @Override
    public void lost(String name, long fencingToken, @Nullable Throwable cause) {
        lost.add(fencingToken);
    }

    public List<Long> acquired() {
        return List.copyOf(acquired);
    }

    public List<Long> released() {
        return List.copyOf(released);
    }

    public List<Long> lost() {
        return List.copyOf(lost);
    }
}
