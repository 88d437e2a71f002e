package dev.runlane.common.kafka;

import java.util.Map;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * The TCP buffer sizes runlane's Kafka clients ask for: none, so that the kernel sizes and
 * autotunes each socket's buffers.
 *
 * <p>Kafka's clients fix {@code SO_RCVBUF} at 64 KiB (consumer) or 32 KiB (producer), which turns
 * the kernel's autotuning off for that socket. Fetch responses are often larger than that: the
 * kernel dropped segments from full receive queues, and TCP resent them only after about 200 ms,
 * its minimum retransmission timeout. On the bench's machine that stalled the stream thread's input
 * for 206-210 ms several times a minute, which was the whole end-to-end tail at 3,500 events/s
 * (D34).
 */
public final class SocketBuffers {
  /** {@code receive.buffer.bytes} and {@code send.buffer.bytes} at -1: the OS's own sizes. */
  public static final Map<String, Object> OS_DEFAULTS =
      Map.of(
          CommonClientConfigs.RECEIVE_BUFFER_CONFIG,
          -1,
          CommonClientConfigs.SEND_BUFFER_CONFIG,
          -1);

  private SocketBuffers() {}
}
