package dev.runlane.common.signature;

import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a request header by name. Implementations are case-insensitive and return null when absent.
 */
@FunctionalInterface
public interface HeaderLookup {

  /**
   * @param name the header name, any case
   * @return the header value (the first one if repeated), or null when absent
   */
  String get(String name);

  /** A case-insensitive lookup over a copy of {@code headers} (null keys are ignored). */
  static HeaderLookup of(Map<String, String> headers) {
    TreeMap<String, String> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    headers.forEach(
        (k, v) -> {
          if (k != null && v != null) {
            copy.putIfAbsent(k, v);
          }
        });
    return copy::get;
  }
}
