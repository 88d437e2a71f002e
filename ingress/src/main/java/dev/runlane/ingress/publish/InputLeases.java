package dev.runlane.ingress.publish;

/** Where the next webhook is written (D71). */
public interface InputLeases {

  /**
   * The input to write the next webhook to, counted in flight until {@link WriteTarget#release()}.
   *
   * @throws ControlViewStale if the ingress cannot tell which input is current any more
   */
  WriteTarget acquire();

  /** Always {@code topic}: for an ingress that does not follow the control topic. */
  static InputLeases fixed(String topic) {
    WriteTarget target = WriteTarget.fixed(topic);
    return () -> {
      target.tryAcquire();
      return target;
    };
  }
}
