/**
 * Spring Boot auto-configuration of distlock: {@link io.distlock.spring.boot.DistlockAutoConfiguration} (the client,
 * the template, the annotation) and {@link io.distlock.spring.boot.DistlockActuatorAutoConfiguration} (endpoint,
 * health, histograms), configured by {@link io.distlock.spring.boot.DistlockProperties}.
 */
@NullMarked
package io.distlock.spring.boot;

import org.jspecify.annotations.NullMarked;
