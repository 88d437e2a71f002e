package dev.runlane.common.kafka;

import dev.runlane.common.config.EnvReader;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The topics of the pipeline.
 *
 * @param webhooks raw webhooks written by the ingress, keyed by run id
 * @param dlq bodies that cannot be used (bad envelope), with a reason header
 * @param events applied events, in order, effectively once
 * @param stale events older than their run's state (audit, at least once)
 * @param runs state per run (compacted)
 */
public record TopicNames(String webhooks, String dlq, String events, String stale, String runs) {

  public static final String ENV_WEBHOOKS = "TOPIC_WEBHOOKS";
  public static final String ENV_DLQ = "TOPIC_DLQ";
  public static final String ENV_EVENTS = "TOPIC_EVENTS";
  public static final String ENV_STALE = "TOPIC_STALE";
  public static final String ENV_RUNS = "TOPIC_RUNS";

  private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

  public TopicNames {
    for (String name : List.of(webhooks, dlq, events, stale, runs)) {
      String problem = problem(name);
      if (problem != null) {
        throw new IllegalArgumentException("topic name " + problem);
      }
    }
  }

  /**
   * {@code sume.webhooks}, {@code sume.webhooks.dlq}, {@code sume.events}, {@code
   * sume.events.stale}, {@code sume.runs}.
   */
  public static TopicNames defaults() {
    return new TopicNames(
        "sume.webhooks", "sume.webhooks.dlq", "sume.events", "sume.events.stale", "sume.runs");
  }

  /**
   * Reads {@code TOPIC_WEBHOOKS}, {@code TOPIC_DLQ}, {@code TOPIC_EVENTS}, {@code TOPIC_STALE} and
   * {@code TOPIC_RUNS}, defaulting to {@link #defaults()}. Illegal or repeated names are recorded
   * as problems on {@code env}; the defaults are returned in their place.
   */
  public static TopicNames fromEnv(EnvReader env) {
    TopicNames d = defaults();
    String webhooks = read(env, ENV_WEBHOOKS, d.webhooks);
    String dlq = read(env, ENV_DLQ, d.dlq);
    String events = read(env, ENV_EVENTS, d.events);
    String stale = read(env, ENV_STALE, d.stale);
    String runs = read(env, ENV_RUNS, d.runs);
    List<String> all = List.of(webhooks, dlq, events, stale, runs);
    if (new HashSet<>(all).size() != all.size()) {
      env.problem(
          "topic names must all differ: "
              + String.join(", ", List.of(ENV_WEBHOOKS, ENV_DLQ, ENV_EVENTS, ENV_STALE, ENV_RUNS))
              + " = "
              + String.join(", ", all));
      return d;
    }
    return new TopicNames(webhooks, dlq, events, stale, runs);
  }

  /** All five names, in component order. */
  public List<String> all() {
    return List.of(webhooks, dlq, events, stale, runs);
  }

  /** The names as a set. */
  public Set<String> asSet() {
    return Set.copyOf(all());
  }

  private static String read(EnvReader env, String variable, String def) {
    String value = env.string(variable, def);
    String problem = problem(value);
    if (problem != null) {
      env.problem(variable + "=" + quote(value) + " is not a legal topic name: " + problem);
      return def;
    }
    return value;
  }

  private static String problem(String name) {
    if (name == null) {
      return "must not be null";
    }
    if (name.equals(".") || name.equals("..")) {
      return "'" + name + "' is reserved";
    }
    if (!LEGAL.matcher(name).matches()) {
      return "must be 1-249 characters of a-z, A-Z, 0-9, '.', '_', '-'";
    }
    return null;
  }

  private static String quote(String value) {
    return "'" + (value.length() > 64 ? value.substring(0, 64) + "..." : value) + "'";
  }
}
