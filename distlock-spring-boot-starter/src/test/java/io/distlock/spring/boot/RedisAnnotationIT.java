package io.distlock.spring.boot;

/** The annotation on Redis, configured from Spring Boot's own {@code spring.data.redis.*} settings. */
class RedisAnnotationIT extends AnnotationContract {
    @Override
    String[] backendProperties() {
        return new String[] {
            "spring.data.redis.host=" + Stores.REDIS_HOST,
            "spring.data.redis.port=" + Stores.REDIS_PORT,
            "distlock.redis.key-prefix=boot-it:"
        };
    }
}
