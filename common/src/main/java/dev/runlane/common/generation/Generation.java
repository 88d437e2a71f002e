package dev.runlane.common.generation;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;

/**
 * One generation of the pipeline: the input topic the ingress writes, the processor {@code
 * application.id} that reads it, and how its run store starts (seeded from an earlier generation's
 * changelog, re-deriving earlier events silently, reprocessing some of them marked).
 *
 * <p>Generation 0 is implicit: {@code TOPIC_WEBHOOKS} read by {@code PROCESSOR_APPLICATION_ID}. The
 * operator tools write every later one into the control topic ({@link ControlTopic}), keyed by the
 * pipeline's base input topic; the services follow what it says (D35).
 *
 * @param number 0 for the implicit first generation, then 1, 2, ...
 * @param state {@code PREPARING} (and for a grow {@code SEEDING}) while the tool works on it, then
 *     {@code ACTIVE}
 * @param kind why it was made
 * @param baseApplicationId {@code PROCESSOR_APPLICATION_ID} of the processors it belongs to
 * @param applicationId the processor's Streams {@code application.id} in this generation
 * @param input the topic the ingress writes and the processor reads
 * @param partitions the input's partition count when the generation was made (0: not recorded)
 * @param seedFrom a run-store changelog copied into this generation's before it first starts, or
 *     null
 * @param replay the ranges of the input to re-derive silently or reprocess marked, or null
 * @param createdAt when the tool wrote it
 * @param previous the generation it replaces (without its own {@code previous}), or null
 * @param aborted on a generation made active again by {@code replay abort} or {@code partitions
 *     grow --abort}: the generation the cancelled command had prepared (without its {@code
 *     previous}), whose number is never used again (D76); else null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Generation(
    @JsonProperty("generation") int number,
    @JsonProperty("state") State state,
    @JsonProperty("kind") Kind kind,
    @JsonProperty("base_application_id") String baseApplicationId,
    @JsonProperty("application_id") String applicationId,
    @JsonProperty("input") String input,
    @JsonProperty("partitions") int partitions,
    @JsonProperty("seed_from") String seedFrom,
    @JsonProperty("replay") Replay replay,
    @JsonProperty("created_at") Instant createdAt,
    @JsonProperty("previous") Generation previous,
    @JsonProperty("aborted") Generation aborted) {

  /** Where the tool is with a generation. */
  public enum State {
    /** Being prepared: a grow moves the ingress, a replay stops the processors. */
    PREPARING,
    /** A grow's old generation has drained: processors stop it while the tool seeds. */
    SEEDING,
    /** Running. */
    ACTIVE
  }

  /** Why a generation was made. */
  public enum Kind {
    /** The implicit first generation. */
    INITIAL,
    /** A new input topic with more partitions; the run store seeded with every run's head. */
    GROW,
    /** State re-derived from the input; nothing that was emitted is emitted again. */
    REBUILD,
    /** State re-derived as of a time; the events after it decided again and emitted, marked. */
    REPROCESS
  }

  public Generation {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(baseApplicationId, "base_application_id");
    Objects.requireNonNull(applicationId, "application_id");
    Objects.requireNonNull(input, "input");
    if (number < 0) {
      throw new IllegalArgumentException("generation must be >= 0");
    }
    if (previous != null && previous.previous() != null) {
      previous = previous.withoutPrevious();
    }
    if (aborted != null && aborted.previous() != null) {
      aborted = aborted.withoutPrevious();
    }
  }

  /** A generation no command aborted on top of (see {@link #aborted()}). */
  public Generation(
      int number,
      State state,
      Kind kind,
      String baseApplicationId,
      String applicationId,
      String input,
      int partitions,
      String seedFrom,
      Replay replay,
      Instant createdAt,
      Generation previous) {
    this(
        number,
        state,
        kind,
        baseApplicationId,
        applicationId,
        input,
        partitions,
        seedFrom,
        replay,
        createdAt,
        previous,
        null);
  }

  /** Generation 0: the configured input read by the configured application id. */
  public static Generation initial(String baseApplicationId, String input) {
    return new Generation(
        0,
        State.ACTIVE,
        Kind.INITIAL,
        baseApplicationId,
        baseApplicationId,
        input,
        0,
        null,
        null,
        null,
        null);
  }

  /**
   * The number of the next generation made from this one: one above this one's, and above the one
   * an abort cancelled, whose topics and application id may be left behind (D76).
   */
  public int nextNumber() {
    return Math.max(number, aborted == null ? 0 : aborted.number()) + 1;
  }

  /** This generation made the latest again by an abort that cancelled {@code cancelled} (D76). */
  public Generation restoredAfter(Generation cancelled) {
    return new Generation(
        number,
        state,
        kind,
        baseApplicationId,
        applicationId,
        input,
        partitions,
        seedFrom,
        replay,
        createdAt,
        previous,
        cancelled);
  }

  /** The application id of generation {@code number} of {@code base}: {@code <base>-g<number>}. */
  public static String applicationId(String base, int number) {
    return number == 0 ? base : base + "-g" + number;
  }

  /** The input topic of a grown generation: {@code <base input>.g<number>}. */
  public static String grownInput(String baseInput, int number) {
    return baseInput + ".g" + number;
  }

  /**
   * What this generation's tasks put before their task id in Redis markers: empty for generation 0,
   * whose markers predate generations, {@code g<n>/} after, so that a marker always names the
   * generation that wrote it (D35).
   */
  @JsonIgnore
  public String ownerPrefix() {
    return number == 0 ? "" : "g" + number + "/";
  }

  /**
   * The generation processors run while this one is the latest record: this one once ACTIVE; while
   * a grow is PREPARING, the one before (it drains its input); otherwise none (the tool needs the
   * processors stopped: a replay reads where they stopped, a grow seeds from a stopped state).
   *
   * @return the generation to run, or null to run none yet
   */
  public Generation toRun() {
    if (state == State.ACTIVE) {
      return this;
    }
    if (kind == Kind.GROW && state == State.PREPARING) {
      return previous;
    }
    return null;
  }

  /** The topic the ingress writes to while this is the latest record. */
  @JsonIgnore
  public String ingressInput() {
    if (state == State.ACTIVE || kind == Kind.GROW || previous == null) {
      return input;
    }
    return previous.input();
  }

  public Generation withState(State next) {
    return new Generation(
        number,
        next,
        kind,
        baseApplicationId,
        applicationId,
        input,
        partitions,
        seedFrom,
        replay,
        createdAt,
        previous,
        aborted);
  }

  public Generation withoutPrevious() {
    return new Generation(
        number,
        state,
        kind,
        baseApplicationId,
        applicationId,
        input,
        partitions,
        seedFrom,
        replay,
        createdAt,
        null,
        aborted);
  }

  /** One line for logs and the tools. */
  public String describe() {
    return "generation "
        + number
        + " ("
        + kind.name().toLowerCase(Locale.ROOT)
        + ", "
        + state.name().toLowerCase(Locale.ROOT)
        + "): application.id="
        + applicationId
        + " input="
        + input
        + (partitions > 0 ? " partitions=" + partitions : "")
        + (seedFrom != null ? " seeded from " + seedFrom : "")
        + (replay != null ? " replay " + replay.id() : "")
        + (aborted != null ? " (generation " + aborted.number + " was aborted)" : "");
  }
}
