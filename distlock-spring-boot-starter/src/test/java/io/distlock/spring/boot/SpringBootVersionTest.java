package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The tests run on the Spring Boot the build chose ({@code spring-boot.version}: 3.5, or 4.0 with -Pboot4). */
class SpringBootVersionTest {

    @Test
    void theClassPathHasTheBootOfTheBuild() {
        assertThat(System.getProperty("distlock.spring-boot.version"))
                .as("set by the starter's pom")
                .isNotBlank();
        assertThat(SpringBoot.VERSION).isEqualTo(System.getProperty("distlock.spring-boot.version"));
    }
}
