package dev.runlane.processor.runs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Options;

class RunStoreMemoryTest {

  @Test
  void everyMemtableGetsAWholeKeyFilterSoReadsOfOlderRunsSkipIt() {
    String pool = "test/" + System.nanoTime();
    try (Options options = new Options()) {
      options.setTableFormatConfig(new BlockBasedTableConfig());

      new RunStoreMemory()
          .setConfig(
              "runs",
              options,
              Map.of(
                  RunStoreMemory.POOL_CONFIG,
                  pool,
                  RunStoreMemory.BYTES_CONFIG,
                  64L * 1024 * 1024));

      assertThat(options.memtableWholeKeyFiltering()).isTrue();
      assertThat(options.memtablePrefixBloomSizeRatio())
          .isEqualTo(RunStoreMemory.MEMTABLE_FILTER_RATIO);
      assertThat(options.writeBufferSize()).isEqualTo(16L * 1024 * 1024);
    } finally {
      RunStoreMemory.release(pool);
    }
  }
}
