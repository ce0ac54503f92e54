package com.example.counter;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** With {@code counter.stop-after=30s}, the application stops itself after that long (without: Ctrl-C). */
@Component
@ConditionalOnProperty("counter.stop-after")
class StopAfter implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(StopAfter.class);

    private final ConfigurableApplicationContext context;
    private final Duration after;
    private final StatsJob job;

    StopAfter(ConfigurableApplicationContext context, Environment environment, StatsJob job) {
        this.context = context;
        this.after = environment.getRequiredProperty("counter.stop-after", Duration.class);
        this.job = job;
    }

    @Override
    public void run(ApplicationArguments args) {
        Thread stopper = new Thread(
                () -> {
                    try {
                        Thread.sleep(after.toMillis());
                    } catch (InterruptedException e) {
                        return;
                    }
                    job.stop();
                    log.info(
                            "counter.stop-after={}: stopping; this instance committed {} increments, {} refused",
                            after,
                            job.committed(),
                            job.refused());
                    System.exit(SpringApplication.exit(context));
                },
                "counter-stop-after");
        stopper.setDaemon(true);
        stopper.start();
    }
}
