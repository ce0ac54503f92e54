package io.distlock.spring.boot;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * What differs between the Spring Boot versions the tests run on (3.5, and 4.0 with {@code -Pboot4}): the tests compile
 * against either, so they name the classes that moved by their names and read health by reflection.
 */
final class SpringBoot {
    /** The version on the class path. */
    static final String VERSION = SpringBootVersion.getVersion();

    static final boolean BOOT_4 = VERSION.startsWith("4.");

    /** The bean name of distlock's health indicator, the same on both. */
    static final String HEALTH_INDICATOR = "distlockHealthIndicator";

    private SpringBoot() {}

    /** The class of the first name present: a class Boot 4 moved, by its Boot 3 and its Boot 4 name. */
    static Class<?> firstPresent(String... names) {
        ClassLoader loader = SpringBoot.class.getClassLoader();
        for (String name : names) {
            if (ClassUtils.isPresent(name, loader)) {
                return ClassUtils.resolveClassName(name, loader);
            }
        }
        throw new IllegalStateException("none of " + String.join(", ", names) + " is on the class path");
    }

    /**
     * The health of distlock's indicator: its status code ({@code UP}, {@code DOWN}) and details.
     *
     * @param context a context with the indicator
     */
    static Health health(ApplicationContext context) {
        Object indicator = context.getBean(HEALTH_INDICATOR);
        Object health = call(indicator, "health");
        Object status = call(health, "getStatus");
        @SuppressWarnings("unchecked")
        Map<String, Object> details = (Map<String, Object>) call(health, "getDetails");
        return new Health((String) call(status, "getCode"), details);
    }

    record Health(String status, Map<String, Object> details) {}

    private static Object call(Object target, String method) {
        try {
            Method m = target.getClass().getMethod(method);
            return m.invoke(target);
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new IllegalStateException(e);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException(e.getCause());
        }
    }
}
