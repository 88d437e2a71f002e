package dev.runlane.processor;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClassDataTrainingTest {

  /**
   * The image's build runs the training with no broker and no Redis (deploy/Dockerfile.processor):
   * it must get through every step, its admin port answering, instead of failing the build (D105).
   */
  @Test
  void loadsAStartsClassesWithNoBrokerAndNoRedis() throws Exception {
    assertThat(ClassDataTraining.run()).isEqualTo(200);
  }
}
