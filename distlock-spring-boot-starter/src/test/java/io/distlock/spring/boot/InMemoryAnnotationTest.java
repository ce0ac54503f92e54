package io.distlock.spring.boot;

/** The annotation on the in-memory backend. */
class InMemoryAnnotationTest extends AnnotationContract {
    @Override
    String[] backendProperties() {
        return new String[] {"distlock.backend=in-memory"};
    }
}
