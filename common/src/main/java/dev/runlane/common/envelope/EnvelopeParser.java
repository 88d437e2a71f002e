package dev.runlane.common.envelope;

import com.fasterxml.jackson.core.ErrorReportConfiguration;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.JsonTokenId;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import dev.runlane.common.envelope.EnvelopeException.Reason;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Reads an {@link Envelope} from a webhook body in one streaming pass.
 *
 * <p>The whole document is consumed, so truncated JSON and trailing content are rejected; while
 * reading, the parser tracks which configured JSON Pointers the current path can still reach (a bit
 * mask per nesting level, no allocation per token) and picks the scalar values at those pointers.
 * Nesting deeper than {@code maxDepth} containers is rejected as it is met. A field present twice
 * (duplicate key) is ambiguous and rejected as {@link Reason#NOT_JSON}, and so is a body that is
 * not well-formed UTF-8.
 *
 * <p>The fields that identify an event ({@code request_id}, the run id and {@code type}) become
 * keys and columns downstream: the Kafka key, record headers, Redis keys and, in the optional sink,
 * PostgreSQL text columns with btree indexes. A parser from {@link #withDefaults()} or a
 * constructor refuses, as {@link Reason#UNSTORABLE_FIELD}, such a field that one of them cannot
 * hold (U+0000, or over {@link #MAX_FIELD_BYTES} bytes); {@link #withoutStorageLimits()} is for
 * readers of records already accepted.
 *
 * <p>Thread-safe and cheap to share: one instance per process.
 */
public final class EnvelopeParser {

  /** The nesting limit of {@link #withDefaults()}. */
  public static final int DEFAULT_MAX_DEPTH = 32;

  /** The highest nesting limit this parser accepts. */
  public static final int MAX_MAX_DEPTH = 1000;

  /**
   * The longest {@code request_id}, run id or {@code type} accepted, in bytes of UTF-8 (not chars:
   * a 4-byte character is 2 chars, an {@code é} 1 char and 2 bytes).
   *
   * <p>PostgreSQL refuses a btree index entry over about 2,700 bytes (a third of an 8 KiB page,
   * less the page's and the tuple's headers; "index row size exceeds btree maximum") and the sink
   * indexes {@code request_id} and {@code run_id}, so a longer id would be accepted here and then
   * refused by the database for ever. 1,024 bytes is under 40% of that limit, so the entry's own
   * overhead (tuple header, length word) fits with room to spare, and so would an index over two of
   * these fields together; it is also far above any id Sume sends (UUIDs and short prefixes). The
   * same bound on {@code type} keeps one rule for the three fields.
   */
  public static final int MAX_FIELD_BYTES = 1024;

  private static final int MAX_ECHO = 64;

  private static final int REQUEST_ID = 0;
  private static final int CREATED_AT = 1;
  private static final int TYPE = 2;
  private static final int FIRST_RUN_ID = 3;

  private static final byte ABSENT = 0;
  private static final byte STRING = 1;
  private static final byte NULL = 2;
  private static final byte OTHER = 3;
  private static final byte DUPLICATE = 4;

  private final JsonFactory factory;
  private final int maxDepth;
  private final boolean storageLimits;
  private final String[] names;
  private final String[][] segments;
  private final int[][] indexes;
  private final int[] lengths;
  private final int allTargets;
  private final int runIdCount;

  /**
   * A parser with the storage limits.
   *
   * @param fields where the envelope fields are
   * @param maxDepth the deepest nesting accepted, counted in containers (the root object is 1), 1
   *     to {@value #MAX_MAX_DEPTH}
   */
  public EnvelopeParser(EnvelopeFields fields, int maxDepth) {
    this(fields, maxDepth, true);
  }

  private EnvelopeParser(EnvelopeFields fields, int maxDepth, boolean storageLimits) {
    Objects.requireNonNull(fields, "fields");
    if (maxDepth < 1 || maxDepth > MAX_MAX_DEPTH) {
      throw new IllegalArgumentException(
          "maxDepth must be 1-" + MAX_MAX_DEPTH + ", got " + maxDepth);
    }
    this.maxDepth = maxDepth;
    this.storageLimits = storageLimits;
    this.factory =
        JsonFactory.builder()
            .streamReadConstraints(
                StreamReadConstraints.builder().maxNestingDepth(maxDepth + 1).build())
            .errorReportConfiguration(
                ErrorReportConfiguration.builder()
                    .maxErrorTokenLength(MAX_ECHO)
                    .maxRawContentLength(0)
                    .build())
            .build();

    List<JsonPointer> targets = new ArrayList<>();
    targets.add(fields.requestId());
    targets.add(fields.createdAt());
    targets.add(fields.type());
    targets.addAll(fields.runId());
    int n = targets.size();
    this.runIdCount = fields.runId().size();
    this.names = new String[n];
    this.segments = new String[n][];
    this.indexes = new int[n][];
    this.lengths = new int[n];
    for (int t = 0; t < n; t++) {
      JsonPointer pointer = targets.get(t);
      names[t] = pointer.toString();
      List<String> segs = new ArrayList<>();
      List<Integer> idx = new ArrayList<>();
      for (JsonPointer p = pointer; !p.matches(); p = p.tail()) {
        segs.add(p.getMatchingProperty());
        idx.add(p.getMatchingIndex());
      }
      segments[t] = segs.toArray(new String[0]);
      indexes[t] = idx.stream().mapToInt(Integer::intValue).toArray();
      lengths[t] = segs.size();
    }
    this.allTargets = (1 << n) - 1;
  }

  /**
   * The default fields ({@link EnvelopeFields#defaults()}), a nesting limit of 32 and the storage
   * limits: what the ingress and the processor decide with.
   */
  public static EnvelopeParser withDefaults() {
    return new EnvelopeParser(EnvelopeFields.defaults(), DEFAULT_MAX_DEPTH);
  }

  /**
   * As {@link #withDefaults()}, but reads a {@code request_id}, run id or {@code type} that holds
   * U+0000 or is longer than {@link #MAX_FIELD_BYTES}: for readers of already-accepted records (the
   * sink), which an older ingress may have let through and where the database is the judge; the
   * ingress and the processor use {@link #withDefaults()}. A lone surrogate is still refused.
   */
  public static EnvelopeParser withoutStorageLimits() {
    return new EnvelopeParser(EnvelopeFields.defaults(), DEFAULT_MAX_DEPTH, false);
  }

  /**
   * Reads the envelope of a webhook body.
   *
   * @param body the raw body (not copied, not modified)
   * @return the envelope, holding {@code body} as its raw bytes
   * @throws EnvelopeException if the body is not a JSON object with the required fields
   */
  public Envelope parse(byte[] body) throws EnvelopeException {
    Objects.requireNonNull(body, "body");
    int notUtf8 = Utf8.firstMalformedByte(body);
    if (notUtf8 >= 0) {
      throw new EnvelopeException(
          Reason.NOT_JSON,
          null,
          String.format(
              Locale.ROOT,
              "body is not UTF-8 JSON: byte 0x%02X at offset %d",
              body[notUtf8] & 0xFF,
              notUtf8));
    }
    String[] values = new String[names.length];
    byte[] states = new byte[names.length];
    try (JsonParser p = factory.createParser(body)) {
      scan(p, values, states);
    } catch (StreamConstraintsException e) {
      throw new EnvelopeException(
          isNesting(e) ? Reason.TOO_DEEP : Reason.NOT_JSON, null, describe(e), e);
    } catch (JsonProcessingException e) {
      throw new EnvelopeException(Reason.NOT_JSON, null, describe(e), e);
    } catch (IOException e) {
      throw new EnvelopeException(
          Reason.NOT_JSON, null, "body is not valid JSON: " + cut(e.getMessage()), e);
    }
    return toEnvelope(body, values, states);
  }

  private void scan(JsonParser p, String[] values, byte[] states)
      throws IOException, EnvelopeException {
    if (p.nextToken() == null) {
      throw new EnvelopeException(Reason.NOT_JSON, null, "body is empty");
    }
    if (p.currentTokenId() != JsonTokenId.ID_START_OBJECT) {
      throw new EnvelopeException(
          Reason.NOT_AN_OBJECT, null, "body is JSON but its root is " + kind(p.currentToken()));
    }
    // masks[d]: targets still reachable below the container at depth d (the root object is 1).
    // next[d]: the next element index of an array at depth d, or -1 for an object.
    int[] masks = new int[maxDepth + 2];
    int[] next = new int[maxDepth + 2];
    int depth = 1;
    masks[1] = allTargets;
    next[1] = -1;
    int pending = 0;
    while (true) {
      JsonToken token = p.nextToken();
      if (token == null) {
        throw new EnvelopeException(Reason.NOT_JSON, null, "body is truncated JSON");
      }
      int id = p.currentTokenId();
      if (id == JsonTokenId.ID_FIELD_NAME) {
        pending = masks[depth] == 0 ? 0 : matchProperty(masks[depth], depth, p.currentName());
        continue;
      }
      if (id == JsonTokenId.ID_END_OBJECT || id == JsonTokenId.ID_END_ARRAY) {
        if (--depth == 0) {
          break;
        }
        continue;
      }
      int candidates;
      if (next[depth] < 0) {
        candidates = pending;
      } else {
        candidates = masks[depth] == 0 ? 0 : matchIndex(masks[depth], depth, next[depth]);
        next[depth]++;
      }
      boolean container = id == JsonTokenId.ID_START_OBJECT || id == JsonTokenId.ID_START_ARRAY;
      if (candidates != 0) {
        int terminal = terminalAt(candidates, depth);
        if (terminal != 0) {
          record(terminal, p, id, values, states);
        }
        candidates &= ~terminal;
      }
      if (container) {
        if (++depth > maxDepth) {
          throw new EnvelopeException(
              Reason.TOO_DEEP, null, "body is nested deeper than " + maxDepth + " levels");
        }
        masks[depth] = candidates;
        next[depth] = id == JsonTokenId.ID_START_ARRAY ? 0 : -1;
      }
    }
    if (p.nextToken() != null) {
      throw new EnvelopeException(
          Reason.NOT_JSON, null, "body has content after the end of the JSON object");
    }
  }

  private int matchProperty(int mask, int depth, String name) {
    int out = 0;
    for (int m = mask; m != 0; m &= m - 1) {
      int t = Integer.numberOfTrailingZeros(m);
      if (segments[t][depth - 1].equals(name)) {
        out |= 1 << t;
      }
    }
    return out;
  }

  private int matchIndex(int mask, int depth, int index) {
    int out = 0;
    for (int m = mask; m != 0; m &= m - 1) {
      int t = Integer.numberOfTrailingZeros(m);
      if (indexes[t][depth - 1] == index) {
        out |= 1 << t;
      }
    }
    return out;
  }

  private int terminalAt(int mask, int depth) {
    int out = 0;
    for (int m = mask; m != 0; m &= m - 1) {
      int t = Integer.numberOfTrailingZeros(m);
      if (lengths[t] == depth) {
        out |= 1 << t;
      }
    }
    return out;
  }

  private static void record(int terminal, JsonParser p, int id, String[] values, byte[] states)
      throws IOException {
    byte state;
    String value = null;
    if (id == JsonTokenId.ID_STRING) {
      state = STRING;
      value = p.getText();
    } else if (id == JsonTokenId.ID_NULL) {
      state = NULL;
    } else {
      state = OTHER;
      value = kind(p.currentToken());
    }
    for (int m = terminal; m != 0; m &= m - 1) {
      int t = Integer.numberOfTrailingZeros(m);
      if (states[t] != ABSENT) {
        states[t] = DUPLICATE;
      } else {
        states[t] = state;
        values[t] = value;
      }
    }
  }

  private Envelope toEnvelope(byte[] body, String[] values, byte[] states)
      throws EnvelopeException {
    String requestId = requiredString(REQUEST_ID, values, states);
    String runId = runId(values, states);
    String createdAtText = requiredString(CREATED_AT, values, states);
    Instant createdAt = Rfc3339.parse(createdAtText);
    if (createdAt == null) {
      throw new EnvelopeException(
          Reason.BAD_TIMESTAMP,
          names[CREATED_AT],
          "field "
              + names[CREATED_AT]
              + " is not an RFC 3339 timestamp with offset (e.g. 2026-11-29T10:00:00Z): "
              + quote(createdAtText));
    }
    String type = optionalString(TYPE, values, states);
    return new Envelope(requestId, runId, createdAt, type, body);
  }

  private String runId(String[] values, byte[] states) throws EnvelopeException {
    for (int i = 0; i < runIdCount; i++) {
      int t = FIRST_RUN_ID + i;
      if (states[t] != ABSENT && states[t] != NULL) {
        return requiredString(t, values, states);
      }
    }
    String tried = names[FIRST_RUN_ID];
    for (int i = 1; i < runIdCount; i++) {
      tried += " or " + names[FIRST_RUN_ID + i];
    }
    throw new EnvelopeException(
        Reason.MISSING_FIELD, names[FIRST_RUN_ID], "run id is missing (looked at " + tried + ")");
  }

  private String requiredString(int t, String[] values, byte[] states) throws EnvelopeException {
    switch (states[t]) {
      case ABSENT:
      case NULL:
        throw new EnvelopeException(
            Reason.MISSING_FIELD,
            names[t],
            "field " + names[t] + " is " + (states[t] == NULL ? "null" : "missing"));
      case STRING:
        if (values[t].isEmpty()) {
          throw new EnvelopeException(
              Reason.WRONG_TYPE, names[t], "field " + names[t] + " is an empty string");
        }
        return storable(t, values[t]);
      case DUPLICATE:
        throw duplicate(t);
      default:
        throw new EnvelopeException(
            Reason.WRONG_TYPE,
            names[t],
            "field " + names[t] + " must be a string but is " + values[t]);
    }
  }

  private String optionalString(int t, String[] values, byte[] states) throws EnvelopeException {
    switch (states[t]) {
      case ABSENT:
      case NULL:
        return null;
      case STRING:
        return values[t].isEmpty() ? null : storable(t, values[t]);
      case DUPLICATE:
        throw duplicate(t);
      default:
        throw new EnvelopeException(
            Reason.WRONG_TYPE,
            names[t],
            "field " + names[t] + " must be a string but is " + values[t]);
    }
  }

  private String storable(int t, String value) throws EnvelopeException {
    return FieldText.requireStorable(names[t], value, storageLimits && t != CREATED_AT);
  }

  private EnvelopeException duplicate(int t) {
    return new EnvelopeException(
        Reason.NOT_JSON,
        names[t],
        "field " + names[t] + " appears more than once (ambiguous duplicate key)");
  }

  private static String kind(JsonToken token) {
    if (token == null) {
      return "nothing";
    }
    switch (token) {
      case START_OBJECT:
        return "an object";
      case START_ARRAY:
        return "an array";
      case VALUE_STRING:
        return "a string";
      case VALUE_NUMBER_INT:
      case VALUE_NUMBER_FLOAT:
        return "a number";
      case VALUE_TRUE:
      case VALUE_FALSE:
        return "a boolean";
      case VALUE_NULL:
        return "null";
      default:
        return token.name().toLowerCase(Locale.ROOT);
    }
  }

  private static boolean isNesting(StreamConstraintsException e) {
    String m = e.getOriginalMessage();
    return m != null && m.toLowerCase(Locale.ROOT).contains("nesting depth");
  }

  private static String describe(JsonProcessingException e) {
    StringBuilder sb = new StringBuilder("body is not valid JSON");
    JsonLocation at = e.getLocation();
    if (at != null && at.getLineNr() > 0) {
      sb.append(" at line ").append(at.getLineNr()).append(", column ").append(at.getColumnNr());
    }
    return sb.append(": ").append(cut(e.getOriginalMessage())).toString();
  }

  private static String cut(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    String first = nl >= 0 ? message.substring(0, nl) : message;
    return first.length() > 2 * MAX_ECHO ? first.substring(0, 2 * MAX_ECHO) + "..." : first;
  }

  private static String quote(String value) {
    return "'" + (value.length() > MAX_ECHO ? value.substring(0, MAX_ECHO) + "..." : value) + "'";
  }
}
