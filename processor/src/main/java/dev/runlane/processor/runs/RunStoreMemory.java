package dev.runlane.processor.runs;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

/**
 * Bounds the RocksDB memory of all run stores of one processor to one budget ({@code
 * PROCESSOR_ROCKSDB_MEMORY_MB}). Streams' defaults give every store its own 50 MB block cache and
 * up to three 16 MB memtables, and there is one store per task, so memory grows with the partition
 * count and nothing caps it. Here the stores share one LRU cache that also holds their index and
 * filter blocks, and their memtables are charged to the same cache (up to half of it before RocksDB
 * flushes them; a quarter made a cold restore about 40% slower, D28), as Kafka's memory-management
 * guide describes.
 *
 * <p>Streams instantiates this class per store, so the shared cache lives in a pool keyed by {@link
 * #POOL_CONFIG}, one per processor, and is freed by {@link #release} once its stores are closed.
 */
public final class RunStoreMemory implements RocksDBConfigSetter {
  /** Streams config key naming the processor's pool. */
  public static final String POOL_CONFIG = "runlane.rocksdb.memory.pool";

  /** Streams config key with the pool's budget in bytes. */
  public static final String BYTES_CONFIG = "runlane.rocksdb.memory.bytes";

  private static final long MAX_MEMTABLE_BYTES = 16L * 1024 * 1024; // Streams' own default

  static final double MEMTABLE_FILTER_RATIO = 0.1;

  private static final Map<String, Pool> POOLS = new ConcurrentHashMap<>();

  private record Pool(Cache cache, WriteBufferManager writeBuffers, long memtableBytes) {
    static Pool of(long bytes) {
      // A tenth of the cache, high priority, for index and filter blocks: evicting them would
      // cost a read per lookup. Not strict: a write must not fail because the cache is full.
      Cache cache = new LRUCache(bytes, -1, false, 0.1);
      long memtables = bytes / 2;
      return new Pool(
          cache, new WriteBufferManager(memtables, cache), Math.min(MAX_MEMTABLE_BYTES, memtables));
    }

    void close() {
      writeBuffers.close();
      cache.close();
    }
  }

  @Override
  public void setConfig(String storeName, Options options, Map<String, Object> configs) {
    String name = String.valueOf(configs.get(POOL_CONFIG));
    long bytes = Long.parseLong(String.valueOf(configs.get(BYTES_CONFIG)));
    Pool pool = POOLS.computeIfAbsent(name, n -> Pool.of(bytes));
    BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
    table.setBlockCache(pool.cache());
    table.setCacheIndexAndFilterBlocks(true);
    table.setCacheIndexAndFilterBlocksWithHighPriority(true);
    table.setPinTopLevelIndexAndFilter(true);
    options.setTableFormatConfig(table);
    options.setWriteBufferManager(pool.writeBuffers());
    options.setWriteBufferSize(pool.memtableBytes());
    options.setMaxWriteBufferNumber(2);
    // Nearly every read is of a run last written long before its memtables began, and without a
    // filter each read searched both memtables' skip lists in vain first: a quarter of the run
    // store's read time at 3,000 events/s (D28). A whole-key bloom
    // filter per memtable, a tenth of its size and inside its budget, answers "not here" at once.
    options.setMemtableWholeKeyFiltering(true);
    options.setMemtablePrefixBloomSizeRatio(MEMTABLE_FILTER_RATIO);
    // A store has more than one column family. An earlier try of a shared write budget saw its
    // flushes go to a near-empty one first, freeing nothing (D28); atomic flush makes every flush
    // cover all of a store's column families. Streams 4.4 sets it on every store itself, and
    // setting it here again only made its options adapter log a WARN per store ("AtomicFlush is
    // explicitly set to True by Streams"), six on every `./runlane demo` (issue 39, D81).
  }

  @Override
  public void close(String storeName, Options options) {
    // The cache and the write buffer manager are shared by every store of the pool: see release.
  }

  /** Frees a pool's cache; call only after every store that used it is closed. */
  public static void release(String pool) {
    Pool p = POOLS.remove(pool);
    if (p != null) {
      p.close();
    }
  }
}
