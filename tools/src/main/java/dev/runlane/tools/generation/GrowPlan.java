package dev.runlane.tools.generation;

import dev.runlane.common.generation.Generation;

/**
 * What a grow does, once {@link GrowCheck} found it possible.
 *
 * @param base the generation to grow
 * @param current the old input's partition count
 * @param built the partition count the base generation's state was built for
 * @param repair partitions were added by hand: copy what the base never decided, no drain
 * @param number the new generation's number
 * @param input the new input topic
 * @param applicationId the new generation's application id
 * @param reuse the new input exists already, empty, left by an earlier run
 * @param seedFrom the base's run-store changelog, the new run store's seed
 */
record GrowPlan(
    Generation base,
    int current,
    int built,
    boolean repair,
    int number,
    String input,
    String applicationId,
    boolean reuse,
    String seedFrom) {}
