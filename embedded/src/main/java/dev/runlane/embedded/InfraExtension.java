package dev.runlane.embedded;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Starts the real infrastructure once per test JVM (Kafka from Testcontainers when Docker answers,
 * else {@link EmbeddedKafka}; Redis from {@link EmbeddedRedis#shared()}) and resolves {@link Infra}
 * parameters of test constructors, test methods and lifecycle methods. Never skips a test: without
 * Docker it uses the in-process broker. The broker is stopped when the JUnit root context closes.
 *
 * <p>Set {@code -Drunlane.it.kafka=embedded} (or {@code RUNLANE_IT_KAFKA=embedded}) to skip the
 * Docker probe; {@code runlane.it.kafka.image} picks the container image.
 */
public final class InfraExtension implements BeforeAllCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(InfraExtension.class);

  @Override
  public void beforeAll(ExtensionContext context) {
    infra(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == Infra.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return infra(context);
  }

  /** The infrastructure shared by every test of this JVM, started on first use. */
  public static Infra infra(ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(SharedInfra.class, key -> SharedInfra.start(), SharedInfra.class);
  }
}
