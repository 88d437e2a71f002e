package dev.runlane.common.decision;

import java.nio.charset.StandardCharsets;

/**
 * The decision log's record value written by hand for the common case: every text field printable
 * ASCII with nothing to escape (ids, topics, layers, reasons are). One record is written per input
 * record on the stream thread, and databind's reflective accessor calls and boxing were a visible
 * share of it (D100). Anything else (a quote, a backslash, a control or non-ASCII character) is
 * left to databind, whose bytes these are field for field: the same names, order, and omission of
 * nulls ({@code DecisionTest}).
 */
final class DecisionBytes {
  private static final byte[] REQUEST_ID = name("{\"request_id\":\"");
  private static final byte[] RUN_ID = name("\"run_id\":\"");
  private static final byte[] INPUT_TOPIC = name("\"input_topic\":\"");
  private static final byte[] INPUT_PARTITION = name("\"input_partition\":");
  private static final byte[] INPUT_OFFSET = name("\"input_offset\":");
  private static final byte[] GENERATION = name("\"generation\":");
  private static final byte[] REPLAY = name("\"replay\":\"");
  private static final byte[] OUTCOME = name("\"outcome\":\"");
  private static final byte[] LAYER = name("\"layer\":\"");
  private static final byte[] REASON = name("\"reason\":\"");
  private static final byte[] OUTPUT = name("\"output\":\"");
  private static final byte[] RECEIVED_AT = name("\"received_at\":");
  private static final byte[] DECIDED_AT = name("\"decided_at\":");

  private final byte[] out;
  private int at;

  private DecisionBytes(int capacity) {
    this.out = new byte[capacity];
  }

  /** {@code d}'s record value, or null when a text field needs escaping or is not ASCII. */
  static byte[] plain(Decision d) {
    String outcome = d.outcome() == null ? null : d.outcome().tag();
    int texts =
        length(d.requestId())
            + length(d.runId())
            + length(d.inputTopic())
            + length(d.replay())
            + length(outcome)
            + length(d.layer())
            + length(d.reason())
            + length(d.output());
    if (texts < 0) {
      return null;
    }
    DecisionBytes w = new DecisionBytes(size(d, outcome, texts));
    w.out[w.at++] = '{';
    w.text(REQUEST_ID, d.requestId());
    w.text(RUN_ID, d.runId());
    w.text(INPUT_TOPIC, d.inputTopic());
    w.number(INPUT_PARTITION, d.inputPartition());
    w.number(INPUT_OFFSET, d.inputOffset());
    w.number(GENERATION, d.generation());
    w.text(REPLAY, d.replay());
    w.text(OUTCOME, outcome);
    w.text(LAYER, d.layer());
    w.text(REASON, d.reason());
    w.text(OUTPUT, d.output());
    if (d.receivedAt() != null) {
      w.number(RECEIVED_AT, d.receivedAt());
    }
    w.number(DECIDED_AT, d.decidedAt());
    w.out[w.at - 1] = '}'; // over the last field's comma
    return w.out;
  }

  /** The record's exact length: one array, written once. */
  private static int size(Decision d, String outcome, int texts) {
    int n = 1 + texts; // the opening brace; the last comma is the closing one
    n += named(REQUEST_ID, d.requestId()) + named(RUN_ID, d.runId());
    n += named(INPUT_TOPIC, d.inputTopic()) + named(REPLAY, d.replay());
    n += named(OUTCOME, outcome) + named(LAYER, d.layer());
    n += named(REASON, d.reason()) + named(OUTPUT, d.output());
    n += INPUT_PARTITION.length + chars(d.inputPartition()) + 1;
    n += INPUT_OFFSET.length + chars(d.inputOffset()) + 1;
    n += GENERATION.length + chars(d.generation()) + 1;
    if (d.receivedAt() != null) {
      n += RECEIVED_AT.length + chars(d.receivedAt()) + 1;
    }
    return n + DECIDED_AT.length + chars(d.decidedAt()) + 1;
  }

  /** A text field's bytes but its value's: its name, the closing quote and the comma; 0: none. */
  private static int named(byte[] name, String value) {
    return value == null ? 0 : name.length + 2;
  }

  /** How many characters {@code v} is written in. */
  private static int chars(long v) {
    if (v == Long.MIN_VALUE) {
      return 20;
    }
    return v < 0 ? 1 + digits(-v) : digits(v);
  }

  /** A field's name and punctuation, without the object's opening brace of the first one's. */
  private static byte[] name(String json) {
    return json.substring(json.startsWith("{") ? 1 : 0).getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * The length of {@code s} written as it is (0 for null), or a large negative number when it is
   * not printable ASCII or holds a quote or a backslash, so that any sum with it stays negative.
   */
  private static int length(String s) {
    if (s == null) {
      return 0;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
        return Integer.MIN_VALUE / 16;
      }
    }
    return s.length();
  }

  /** A text field; null: none. */
  private void text(byte[] name, String value) {
    if (value != null) {
      bytes(name);
      for (int i = 0; i < value.length(); i++) {
        out[at++] = (byte) value.charAt(i); // printable ASCII: each char is its byte
      }
      out[at++] = '"';
      out[at++] = ',';
    }
  }

  private void number(byte[] name, long value) {
    bytes(name);
    if (value == Long.MIN_VALUE) {
      for (byte b : Long.toString(value).getBytes(StandardCharsets.US_ASCII)) {
        out[at++] = b;
      }
    } else {
      long v = value;
      if (v < 0) {
        out[at++] = '-';
        v = -v;
      }
      int end = at + digits(v);
      for (int i = end - 1; i >= at; i--) {
        out[i] = (byte) ('0' + v % 10);
        v /= 10;
      }
      at = end;
    }
    out[at++] = ',';
  }

  private static int digits(long v) {
    int n = 1;
    for (long x = v; x >= 10; x /= 10) {
      n++;
    }
    return n;
  }

  private void bytes(byte[] b) {
    System.arraycopy(b, 0, out, at, b.length);
    at += b.length;
  }
}
