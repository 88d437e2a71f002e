package dev.runlane.common.generation;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.runlane.common.kafka.TopicEnsurer;
import dev.runlane.common.kafka.TopicSettings;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;

/**
 * What one ingress process says about the topic it writes to, written to the control topic's
 * companion {@code <TOPIC_CONTROL>.ingress} on every change and every few seconds (D71). A {@code
 * partitions grow} waits until every ingress heard from recently acknowledges the new input,
 * instead of trusting a quiet period.
 *
 * <p>Keyed by {@code <pipeline>/<instance>} (the pipeline is the base input topic, as in the
 * control topic); a clean stop writes a tombstone. The topic keeps the broker's append time, so
 * that the tool judges "heard recently" on one clock.
 *
 * @param instance the process: host name and process id
 * @param generation the latest generation the ingress read from the control topic (0: none)
 * @param input the topic it writes every new webhook to
 * @param drained whether no write to any other input is still in flight: only then does the
 *     acknowledgement mean "nothing more will land in the topic I left"
 * @param staleAfterMs how long after its last read of the control topic the ingress stops writing
 *     and answers 503
 * @param goneAfterMs how long after its last acknowledgement no write of it can land any more (its
 *     stale bound plus its producer's delivery timeout): an ingress silent for longer is not waited
 *     for
 */
public record IngressAck(
    @JsonProperty("instance") String instance,
    @JsonProperty("generation") int generation,
    @JsonProperty("input") String input,
    @JsonProperty("drained") boolean drained,
    @JsonProperty("stale_after_ms") long staleAfterMs,
    @JsonProperty("gone_after_ms") long goneAfterMs) {

  /** How long an ingress keeps its key after it stopped writing acknowledgements. */
  static final Duration RETENTION = Duration.ofHours(1);

  public IngressAck {
    Objects.requireNonNull(instance, "instance");
    Objects.requireNonNull(input, "input");
  }

  /** The companion topic of {@code controlTopic}. */
  public static String topic(String controlTopic) {
    return controlTopic + ".ingress";
  }

  /** The record key: the pipeline (base input) and the instance. */
  public static String key(String pipeline, String instance) {
    return pipeline + "/" + instance;
  }

  /**
   * The topic as a service creates it: one partition, compacted and deleted after an hour (a live
   * ingress writes every few seconds, so only the keys of processes gone for an hour go), stamped
   * with the broker's time.
   */
  public static NewTopic newTopic(String controlTopic, TopicSettings settings) {
    return TopicEnsurer.plain(
            topic(controlTopic), new TopicSettings(1, settings.replicationFactor()))
        .configs(
            Map.of(
                TopicConfig.CLEANUP_POLICY_CONFIG,
                TopicConfig.CLEANUP_POLICY_COMPACT + "," + TopicConfig.CLEANUP_POLICY_DELETE,
                TopicConfig.RETENTION_MS_CONFIG,
                Long.toString(RETENTION.toMillis()),
                TopicConfig.SEGMENT_MS_CONFIG,
                Long.toString(Duration.ofMinutes(10).toMillis()),
                TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG,
                "LogAppendTime"));
  }

  /**
   * Whether this acknowledgement says the ingress writes nothing more to inputs older than {@code
   * input} of generation {@code number}.
   */
  public boolean writesOnlyTo(int number, String newInput) {
    return generation >= number && input.equals(newInput) && drained;
  }

  public byte[] encode() {
    return ControlTopic.toJson(this);
  }

  /**
   * @throws IllegalArgumentException if {@code json} is not an acknowledgement
   */
  public static IngressAck decode(byte[] json) {
    return ControlTopic.fromJson(json, IngressAck.class, "ingress acknowledgement");
  }
}
