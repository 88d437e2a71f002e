package dev.runlane.embedded;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks an integration test class that runs against a real Kafka broker and a real Redis, shared by
 * the whole test JVM; declare an {@link Infra} parameter to reach them.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ExtendWith(InfraExtension.class)
public @interface RealInfra {}
