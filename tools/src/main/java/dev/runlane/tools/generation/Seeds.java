package dev.runlane.tools.generation;

import dev.runlane.common.generation.StateTopics;
import dev.runlane.tools.kafka.Changelogs;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.TopicConfig;

/**
 * Seeding a new generation's run store: its changelog is created before its processors first start
 * and filled with every run's state, which each task restores before it decides its first event
 * (D35).
 */
final class Seeds {
  private Seeds() {}

  /**
   * Copies {@code source} (a run-store changelog) into {@code applicationId}'s run-store changelog,
   * created with {@code partitions} partitions (the input's: Streams refuses another count) and the
   * source's topic configs (compacted, and the size limit the processor set).
   *
   * @return records copied
   */
  static long copy(Pipeline pipeline, String source, String applicationId, int partitions) {
    String target = StateTopics.runsChangelog(applicationId);
    Map<String, String> configs = new HashMap<>(pipeline.cluster().topicConfigs(source));
    configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
    pipeline
        .cluster()
        .create(target, partitions, pipeline.config().topicSettings().replicationFactor(), configs);
    return Changelogs.copy(pipeline.clientSettings(), source, target);
  }
}
