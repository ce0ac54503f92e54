import io.distlock.*;
import io.distlock.redis.*;
import java.time.Duration;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

public class TProbe {
    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[0]);
        boolean threadView = a.length > 1;
        try (LockClient c = RedisLockClient.builder().uri("redis://127.0.0.1:16480").build()) {
            AtomicLong ops = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            for (int i = 0; i < threads; i++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        String name = "t" + ThreadLocalRandom.current().nextInt(100);
                        try {
                            if (threadView) {
                                DistributedLock l = c.lock(name);
                                if (l.tryLock(2, TimeUnit.SECONDS)) { l.unlock(); ops.incrementAndGet(); }
                                else System.out.println(Thread.currentThread().getName() + " timed out on " + name + " locked=" + l.isLocked());
                            } else {
                                var h = c.lock(name).tryAcquire(Duration.ofSeconds(2));
                                if (h.isPresent()) { h.get().release(); ops.incrementAndGet(); }
                                else System.out.println(Thread.currentThread().getName() + " timed out on " + name + " locked=" + c.lock(name).isLocked());
                            }
                        } catch (InterruptedException e) { return; }
                    }
                });
                t.setDaemon(true);
                t.start();
            }
            for (int s = 0; s < 8; s++) {
                long before = ops.get();
                Thread.sleep(1000);
                System.out.println("threads=" + threads + " ops/s=" + (ops.get() - before));
            }
            stop.set(true);
        }
    }
}
