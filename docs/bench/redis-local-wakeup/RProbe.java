import io.distlock.*;
import io.distlock.redis.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

public class RProbe {
    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[0]);
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        
        try (LockClient c = RedisLockClient.builder().uri("redis://127.0.0.1:16480").asyncExecutor(ex).build()) {
            AtomicLong ops = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            for (int i = 0; i < 64; i++) chain(c, ops, stop);
            for (int s = 0; s < 10; s++) {
                long before = ops.get();
                Thread.sleep(1000);
                System.out.println("threads=" + threads + " ops/s=" + (ops.get() - before));
            }
            stop.set(true);
        }
        ex.shutdownNow();
    }
    static void chain(LockClient c, AtomicLong ops, AtomicBoolean stop) {
        if (stop.get()) return;
        String name = "n" + ThreadLocalRandom.current().nextInt(100);
        c.lock(name).acquireAsync().thenCompose(h -> h.releaseAsync()).whenComplete((v, e) -> {
            if (e != null) { System.out.println(e); return; }
            ops.incrementAndGet();
            chain(c, ops, stop);
        });
    }
}
