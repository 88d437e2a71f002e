package dev.runlane.common.envelope;

import static dev.runlane.common.Generators.between;
import static dev.runlane.common.Generators.bmpOutsideAscii;
import static dev.runlane.common.Generators.bytes;
import static dev.runlane.common.Generators.listOf;
import static dev.runlane.common.Generators.oneOf;
import static dev.runlane.common.Generators.weighted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.runlane.common.PropertyCheck;
import dev.runlane.common.envelope.EnvelopeException.Reason;
import dev.runlane.common.envelope.Json.Arr;
import dev.runlane.common.envelope.Json.Bool;
import dev.runlane.common.envelope.Json.Escapes;
import dev.runlane.common.envelope.Json.Null;
import dev.runlane.common.envelope.Json.Num;
import dev.runlane.common.envelope.Json.Obj;
import dev.runlane.common.envelope.Json.Str;
import dev.runlane.common.envelope.Json.Style;
import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Properties of {@link EnvelopeParser} over generated bodies: whatever the bytes, it returns an
 * envelope or throws {@link EnvelopeException} with a short message (never another exception), and
 * the fields it returns are Unicode text a store can hold (no U+0000, at most {@link
 * EnvelopeParser#MAX_FIELD_BYTES} bytes); a well-formed document is read exactly as its JSON
 * Pointers say, with the default fields and with configured ones; a valid envelope round-trips;
 * every strict prefix is refused as not JSON; nesting is refused exactly beyond the limit.
 */
class EnvelopeParserPropertiesTest {

  // Tries: 1000 where a try is cheap; 300-500 where a try generates, writes and parses a
  // document; 30 for bodies of up to 2 million characters; this class runs in a few seconds. A
  // property that returns an outcome names the outcomes its generators must reach.

  /** The longest message seen is about 200 characters: a location plus a 128-character excerpt. */
  private static final int MAX_MESSAGE = 300;

  private static final Set<String> TOP_TARGETS =
      Set.of("request_id", "created_at", "type", "run_id", "data");

  private static final EnvelopeParser PARSER = EnvelopeParser.withDefaults();

  /** A valid envelope, the fields it must parse to, and how it is written. */
  record Valid(
      Obj doc, String requestId, String runId, Instant createdAt, String type, Style style) {

    byte[] bytes() {
      return Json.write(doc, style).getBytes(StandardCharsets.UTF_8);
    }
  }

  /** An RFC 3339 timestamp as written, and the instant it denotes. */
  record Stamp(String text, Instant instant) {}

  /** What parse did: the envelope, or the failure. */
  record Outcome(Envelope envelope, EnvelopeException failure) {}

  // ---- Robustness: nothing but EnvelopeException escapes ----

  @Test
  void anyBytesAreReadOrRefusedWithAnEnvelopeException() {
    PropertyCheck.forAll(
        1000,
        EnvelopeParserPropertiesTest::anyBytes,
        body -> outcome(parse(PARSER, body)),
        Set.of(Reason.NOT_JSON, Reason.NOT_AN_OBJECT));
  }

  @Test
  void mutatedEnvelopesAreReadOrRefusedWithAnEnvelopeException() {
    record Mutated(Valid valid, Charset encoding, List<Mutation> mutations) {}
    PropertyCheck.forAll(
        300,
        r -> new Mutated(valid(r), encoding(r), listOf(r, 1, 4, () -> mutation(r))),
        in -> {
          byte[] body = Json.write(in.valid().doc(), in.valid().style()).getBytes(in.encoding());
          for (Mutation m : in.mutations()) {
            body = m.apply(body);
          }

          return outcome(parse(PARSER, body));
        },
        Set.of("parsed", Reason.NOT_JSON));
  }

  @Test
  void everyStrictPrefixOfAnEnvelopeIsNotJson() {
    record Prefix(Valid valid, int cut) {}
    PropertyCheck.forAll(
        500,
        r -> {
          Valid valid = valid(r);
          return new Prefix(valid, between(r, 0, valid.bytes().length - 1));
        },
        in -> {
          byte[] prefix = Arrays.copyOf(in.valid().bytes(), in.cut());

          Outcome o = parse(PARSER, prefix);

          assertThat(o.failure()).as("a strict prefix must not parse").isNotNull();
          assertThat(o.failure().reason()).isEqualTo(Reason.NOT_JSON);
        });
  }

  /**
   * Containers nested {@code n} deep inside the root object: parsed when {@code 1 + n <= maxDepth},
   * else TOO_DEEP, whether or not the document is complete (an incomplete one within the limit is
   * NOT_JSON). Up to 100,000 levels: the parser must not recurse.
   */
  @Test
  void nestingIsRefusedExactlyBeyondTheLimit() {
    PropertyCheck.forAll(
        300,
        EnvelopeParserPropertiesTest::nesting,
        nesting -> {
          int maxDepth = nesting.maxDepth();
          boolean complete = nesting.complete();
          boolean[] arrays = new boolean[nesting.levels()];
          Random kinds = new Random(nesting.kinds());
          StringBuilder sb =
              new StringBuilder("{\"request_id\":\"r\",\"run_id\":\"u\",")
                  .append("\"created_at\":\"2026-11-29T10:00:00Z\",\"x\":");
          for (int i = 0; i < arrays.length; i++) {
            arrays[i] = kinds.nextBoolean();
            sb.append(arrays[i] ? "[" : "{\"k\":");
          }
          sb.append("0");
          if (complete) {
            for (int i = arrays.length - 1; i >= 0; i--) {
              sb.append(arrays[i] ? "]" : "}");
            }
            sb.append('}');
          }
          int depth = 1 + arrays.length;

          Outcome o =
              parse(
                  new EnvelopeParser(EnvelopeFields.defaults(), maxDepth),
                  sb.toString().getBytes(StandardCharsets.UTF_8));

          if (depth > maxDepth) {
            assertThat(o.failure()).isNotNull();
            assertThat(o.failure().reason()).isEqualTo(Reason.TOO_DEEP);
          } else if (complete) {
            assertThat(o.failure()).isNull();
          } else {
            assertThat(o.failure()).isNotNull();
            assertThat(o.failure().reason()).isEqualTo(Reason.NOT_JSON);
          }
          return outcome(o);
        },
        Set.of("parsed", Reason.TOO_DEEP, Reason.NOT_JSON));
  }

  /**
   * Bytes that are not UTF-8, or a lone surrogate escape, inside a field's string: refused as
   * NOT_JSON for that body, or (an overlong form, which Jackson decodes) read as Unicode; never an
   * envelope whose field is not Unicode.
   */
  @Test
  void aFieldThatIsNotUnicodeIsNeverRead() {
    record Marked(Valid valid, String field, byte[] bad, int at) {}
    PropertyCheck.forAll(
        500,
        r -> {
          Valid valid = valid(r);
          String field = oneOf(r, "request_id", "run_id", "type");
          byte[] bad = notUnicode(r);
          String value = fieldValue(valid, field);
          return new Marked(
              valid, field, bad, between(r, 0, value.codePointCount(0, value.length())));
        },
        in -> {
          Valid valid = in.valid();
          String field = in.field();
          String value = fieldValue(valid, field);
          int cut = value.offsetByCodePoints(0, in.at());
          Str marked = new Str(value.substring(0, cut) + MARKER + value.substring(cut));
          Obj doc = valid.doc();
          if (field.equals("run_id")
              && doc.get("data") instanceof Obj d
              && d.get("run_id") instanceof Str) {
            doc = doc.with("data", d.with("run_id", marked)); // where the run id is read from
          } else if (doc.get(field) != null) {
            doc = doc.with(field, marked);
          } else {
            List<Map.Entry<String, Json>> members = new ArrayList<>(doc.members());
            members.add(Map.entry(field, marked));
            doc = new Obj(members);
          }
          Escapes escapes =
              valid.style().escapes() == Escapes.ALL ? Escapes.ASCII : valid.style().escapes();
          String json = Json.write(doc, new Style(escapes, valid.style().space()));
          int m = json.indexOf(MARKER);
          ByteArrayOutputStream body = new ByteArrayOutputStream();
          body.writeBytes(json.substring(0, m).getBytes(StandardCharsets.UTF_8));
          body.writeBytes(in.bad());
          body.writeBytes(json.substring(m + MARKER.length()).getBytes(StandardCharsets.UTF_8));

          Outcome o = parse(PARSER, body.toByteArray());

          if (o.failure() != null) {
            assertThat(o.failure().reason()).isEqualTo(Reason.NOT_JSON);
          }
          return o.failure() == null ? "read as Unicode" : "refused";
        },
        Set.of("read as Unicode", "refused"));
  }

  /**
   * Where the bad bytes go: ASCII letters, written as they are unless every character is escaped.
   */
  private static final String MARKER = "QqNotUnicodeHereQq";

  /** The value the field has in the envelope, or one to give it. */
  private static String fieldValue(Valid valid, String field) {
    return switch (field) {
      case "request_id" -> valid.requestId();
      case "run_id" -> valid.runId();
      default -> valid.type() == null ? "t" : valid.type();
    };
  }

  /**
   * Strings, arrays, objects, whitespace, numbers and names of up to 2 million characters; a
   * request id that long is refused as unstorable, and read without the storage limits.
   */
  @Test
  void hugeBodiesAreReadOrRefusedAsNotJson() {
    record HugeBody(Huge shape, int size, String unit) {}
    PropertyCheck.forAll(
        30,
        r -> {
          Huge shape = oneOf(r, Huge.values());
          // 1,000 to 2,000,000, log-uniform: as many tries under 45,000 as above.
          int size = (int) Math.round(1_000 * Math.pow(2_000, between(r, 0, 1_000) / 1_000.0));
          return new HugeBody(shape, size, text(r, 0, 30));
        },
        in -> {
          Huge shape = in.shape();
          int size = in.size();
          String unit = in.unit();
          String fill =
              (unit.isEmpty() ? "x" : unit).repeat(Math.max(1, size / Math.max(1, unit.length())));
          String requestId = shape == Huge.LONG_REQUEST_ID ? fill : "r";
          StringBuilder sb = new StringBuilder("{");
          sb.append("\"request_id\":")
              .append(Json.write(new Str(requestId), new Style(Escapes.MINIMAL, "")))
              .append(",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\",\"extra\":");
          switch (shape) {
            case LONG_REQUEST_ID -> sb.append("0");
            case LONG_STRING -> sb.append(Json.write(new Str(fill), new Style(Escapes.ASCII, "")));
            case WIDE_ARRAY ->
                sb.append('[').append("[{},0,\"a\"],".repeat(size / 10)).append("0]");
            case MANY_MEMBERS -> {
              sb.append('{');
              for (int i = 0; i < size / 16; i++) {
                sb.append("\"request_id").append(i).append("\":null,");
              }
              sb.append("\"end\":0}");
            }
            case LONG_WHITESPACE -> sb.append(" \n\t\r".repeat(size / 4)).append("0");
            case LONG_NUMBER -> sb.append("-").append("9".repeat(size)).append(".5e-7");
            case LONG_KEY -> sb.append("{\"").append("k".repeat(size)).append("\":0}");
          }
          sb.append('}');

          Outcome o = parse(PARSER, sb.toString().getBytes(StandardCharsets.UTF_8));

          if (shape == Huge.LONG_NUMBER || shape == Huge.LONG_KEY) {
            // Jackson's stream read constraints may refuse a number or name this long: not JSON to
            // us.
            if (o.failure() != null) {
              assertThat(o.failure().reason()).isEqualTo(Reason.NOT_JSON);
            }
          } else if (shape == Huge.LONG_REQUEST_ID && !isStorable(requestId)) {
            assertThat(o.failure()).isNotNull();
            assertThat(o.failure().reason()).isEqualTo(Reason.UNSTORABLE_FIELD);
          } else {
            assertThat(o.failure()).isNull();
            assertThat(o.envelope().requestId()).isEqualTo(requestId);
          }
          if (shape == Huge.LONG_REQUEST_ID) {
            // A reader of accepted records takes any length (the database judges there).
            try {
              assertThat(
                      EnvelopeParser.withoutStorageLimits()
                          .parse(sb.toString().getBytes(StandardCharsets.UTF_8))
                          .requestId())
                  .isEqualTo(requestId);
            } catch (EnvelopeException e) {
              fail("without storage limits, expected to parse: " + e.getMessage());
            }
          }
        });
  }

  enum Huge {
    LONG_REQUEST_ID,
    LONG_STRING,
    WIDE_ARRAY,
    MANY_MEMBERS,
    LONG_WHITESPACE,
    LONG_NUMBER,
    LONG_KEY
  }

  // ---- Well-formed documents are read as the pointers say ----

  @Test
  void validEnvelopesRoundTrip() {
    PropertyCheck.forAll(
        500,
        EnvelopeParserPropertiesTest::valid,
        valid -> {
          byte[] body = valid.bytes();

          Outcome o = parse(PARSER, body);

          if (o.failure() != null) {
            fail(
                "expected to parse, failed with "
                    + o.failure().code()
                    + ": "
                    + o.failure().getMessage());
          }
          Envelope e = o.envelope();
          assertThat(e.requestId()).isEqualTo(valid.requestId());
          assertThat(e.runId()).isEqualTo(valid.runId());
          assertThat(e.createdAt()).isEqualTo(valid.createdAt());
          assertThat(e.type()).isEqualTo(valid.type());
          assertThat(e.raw()).isSameAs(body);
        });
  }

  /**
   * Any well-formed document, written in any legal style, parses as a reading of its tree by the
   * default pointers says: a non-object root is NOT_AN_OBJECT; otherwise each field is absent,
   * null, a string, another type, or there twice, and the parser either returns exactly the fields
   * or fails with one of the failures that reading finds (a missing field, a wrong type, a bad
   * timestamp, an ambiguous duplicate, an identifying field no store can hold).
   */
  @Test
  void anyDocumentIsReadAsItsPointersSay() {
    record Document(Json doc, Style style) {}
    Set<Object> mustReach = new HashSet<>(EnumSet.allOf(Reason.class));
    mustReach.remove(Reason.TOO_DEEP); // the documents nest at most 6 levels
    mustReach.add("parsed");
    PropertyCheck.forAll(
        500,
        r -> new Document(document(r), style(r)),
        in -> {
          Json doc = in.doc();
          Outcome o = parse(PARSER, Json.write(doc, in.style()).getBytes(StandardCharsets.UTF_8));

          if (!(doc instanceof Obj root)) {
            assertThat(o.failure()).isNotNull();
            assertThat(o.failure().reason()).isEqualTo(Reason.NOT_AN_OBJECT);
            assertThat(o.failure().field()).isNull();
            return Reason.NOT_AN_OBJECT;
          }
          Reading reading = Reading.of(root);
          return assertReadAs(o, reading);
        },
        mustReach);
  }

  /**
   * The same with configured pointers: 1 to 16 run id pointers, array indexes, escaped {@code ~}
   * and {@code /}, pointers that overlap or coincide, and a nesting limit (1 to 8, or the default)
   * that the document may exceed (then TOO_DEEP, whatever else is wrong).
   */
  @Test
  void anyDocumentIsReadAsConfiguredPointersSay() {
    PropertyCheck.forAll(
        300,
        EnvelopeParserPropertiesTest::configured,
        c -> {
          EnvelopeFields fields =
              EnvelopeFields.of(
                  pointer(c.requestId()),
                  pointer(c.createdAt()),
                  c.runIds().stream().map(EnvelopeParserPropertiesTest::pointer).toList(),
                  pointer(c.type()));
          byte[] body = Json.write(c.doc(), c.style()).getBytes(StandardCharsets.UTF_8);

          Outcome o = parse(new EnvelopeParser(fields, c.maxDepth()), body);

          if (depth(c.doc()) > c.maxDepth()) {
            assertThat(o.failure()).isNotNull();
            assertThat(o.failure().reason()).isEqualTo(Reason.TOO_DEEP);
            return Reason.TOO_DEEP;
          }
          Reading reading = Reading.of(c.doc(), c.requestId(), c.createdAt(), c.runIds(), c.type());
          return assertReadAs(o, reading);
        },
        Set.of("parsed", Reason.TOO_DEEP, Reason.WRONG_TYPE, Reason.MISSING_FIELD));
  }

  /** Configured pointers (as segments), a nesting limit and a document that often has them. */
  record Configured(
      List<String> requestId,
      List<String> createdAt,
      List<List<String>> runIds,
      List<String> type,
      int maxDepth,
      Obj doc,
      Style style) {}

  /** Values to plant at the configured pointers. */
  record Plants(Json requestId, Stamp createdAt, Json runId, Json type) {}

  /**
   * A JSON Pointer from its segments (RFC 6901: {@code ~} as {@code ~0}, {@code /} as {@code ~1}).
   */
  static String pointer(List<String> segments) {
    StringBuilder sb = new StringBuilder();
    for (String s : segments) {
      sb.append('/').append(s.replace("~", "~0").replace("/", "~1"));
    }
    return sb.toString();
  }

  /** Containers nested, the root object counting 1. */
  static int depth(Json node) {
    if (node instanceof Obj o) {
      return 1 + o.members().stream().mapToInt(m -> depth(m.getValue())).max().orElse(0);
    }
    if (node instanceof Arr a) {
      return 1 + a.items().stream().mapToInt(EnvelopeParserPropertiesTest::depth).max().orElse(0);
    }
    return 0;
  }

  /**
   * {@code node} with {@code value} at {@code path}, making objects (or using array items) on the
   * way.
   */
  static Json plant(Json node, List<String> path, Json value) {
    if (path.isEmpty()) {
      return value;
    }
    String key = path.get(0);
    List<String> rest = path.subList(1, path.size());
    if (node instanceof Arr a && index(key) >= 0 && index(key) < a.items().size()) {
      List<Json> items = new ArrayList<>(a.items());
      items.set(index(key), plant(items.get(index(key)), rest, value));
      return new Arr(items);
    }
    Obj o = node instanceof Obj obj ? obj : new Obj(List.of());
    Json child = o.get(key);
    if (child == null) {
      List<Map.Entry<String, Json>> members = new ArrayList<>(o.members());
      members.add(Map.entry(key, plant(new Obj(List.of()), rest, value)));
      return new Obj(members);
    }
    return o.with(key, plant(child, rest, value));
  }

  /** A segment as an array index (RFC 6901: digits without a leading zero), or -1. */
  static int index(String segment) {
    if (!segment.matches("0|[1-9][0-9]{0,8}")) {
      return -1;
    }
    return Integer.parseInt(segment);
  }

  /**
   * {@code created_at} as a reading of RFC 3339 section 5.6 says: {@code
   * yyyy-mm-ddThh:mm:ss[.fraction](Z|±hh:mm)}, {@code T} and {@code Z} in either case, a real date
   * and time (no leap second), offset hours up to 23; the fraction truncated to nanoseconds.
   */
  @Test
  void timestampsAreReadAsRfc3339Says() {
    PropertyCheck.forAll(
        500,
        EnvelopeParserPropertiesTest::timestampLike,
        text -> {
          Instant expected = rfc3339(text);

          assertThat(Rfc3339.parse(text)).isEqualTo(expected);
          return expected == null ? "refused" : "read";
        },
        Set.of("read", "refused"));
  }

  // ---- Oracles ----

  /**
   * The default fields read from a tree: every value each pointer reaches (a key repeated on the
   * way reaches several), and the failures the EnvelopeException reasons document.
   */
  record Reading(
      Set<Map.Entry<Reason, String>> failures,
      String requestId,
      String runId,
      Instant createdAt,
      String type) {

    static Reading of(Obj root) {
      return of(
          root,
          List.of("request_id"),
          List.of("created_at"),
          List.of(List.of("data", "run_id"), List.of("run_id")),
          List.of("type"));
    }

    static Reading of(
        Obj root,
        List<String> requestIdAt,
        List<String> createdAtAt,
        List<List<String>> runIdAt,
        List<String> typeAt) {
      Set<Map.Entry<Reason, String>> failures = new LinkedHashSet<>();
      String requestId = required(root, requestIdAt, true, failures);
      String runId = null;
      boolean runIdSeen = false;
      for (List<String> pointer : runIdAt) {
        List<Json> at = at(root, pointer);
        if (at.stream().anyMatch(v -> !(v instanceof Null)) || at.size() > 1) {
          runId = required(root, pointer, true, failures);
          runIdSeen = true;
          break;
        }
      }
      if (!runIdSeen) {
        failures.add(Map.entry(Reason.MISSING_FIELD, pointer(runIdAt.get(0))));
      }
      String createdAtText = required(root, createdAtAt, false, failures);
      Instant createdAt = null;
      if (createdAtText != null) {
        createdAt = rfc3339(createdAtText);
        if (createdAt == null) {
          failures.add(Map.entry(Reason.BAD_TIMESTAMP, pointer(createdAtAt)));
        }
      }
      String type = null;
      String typePointer = pointer(typeAt);
      List<Json> types = at(root, typeAt);
      if (types.size() > 1) {
        failures.add(Map.entry(Reason.NOT_JSON, typePointer));
      } else if (types.size() == 1 && types.get(0) instanceof Str s) {
        if (!isUnicode(s.value())) {
          failures.add(Map.entry(Reason.NOT_JSON, typePointer));
        } else if (!isStorable(s.value())) {
          failures.add(Map.entry(Reason.UNSTORABLE_FIELD, typePointer));
        } else {
          type = s.value().isEmpty() ? null : s.value();
        }
      } else if (types.size() == 1 && !(types.get(0) instanceof Null)) {
        failures.add(Map.entry(Reason.WRONG_TYPE, typePointer));
      }
      return new Reading(failures, requestId, runId, createdAt, type);
    }

    /** {@code limited}: an identifying field, refused if no store can hold it. */
    private static String required(
        Obj root, List<String> segments, boolean limited, Set<Map.Entry<Reason, String>> failures) {
      String pointer = pointer(segments);
      List<Json> at = at(root, segments);
      if (at.size() > 1) {
        failures.add(Map.entry(Reason.NOT_JSON, pointer));
      } else if (at.isEmpty() || at.get(0) instanceof Null) {
        failures.add(Map.entry(Reason.MISSING_FIELD, pointer));
      } else if (at.get(0) instanceof Str s && !s.value().isEmpty()) {
        if (!isUnicode(s.value())) {
          failures.add(Map.entry(Reason.NOT_JSON, pointer));
        } else if (limited && !isStorable(s.value())) {
          failures.add(Map.entry(Reason.UNSTORABLE_FIELD, pointer));
        } else {
          return s.value();
        }
      } else {
        failures.add(Map.entry(Reason.WRONG_TYPE, pointer));
      }
      return null;
    }

    /**
     * The values a pointer reaches (RFC 6901): a segment names an object member, every member of
     * that name (a repeated key reaches several), or an array item by index.
     */
    private static List<Json> at(Json node, List<String> segments) {
      List<Json> out = new ArrayList<>();
      collect(node, segments, out);
      return out;
    }

    private static void collect(Json node, List<String> path, List<Json> out) {
      if (path.isEmpty()) {
        out.add(node);
      } else if (node instanceof Obj o) {
        for (Map.Entry<String, Json> m : o.members()) {
          if (m.getKey().equals(path.get(0))) {
            collect(m.getValue(), path.subList(1, path.size()), out);
          }
        }
      } else if (node instanceof Arr a) {
        int i = index(path.get(0));
        if (i >= 0 && i < a.items().size()) {
          collect(a.items().get(i), path.subList(1, path.size()), out);
        }
      }
    }
  }

  private static final Pattern RFC3339 =
      Pattern.compile(
          "(\\d{4})-(\\d{2})-(\\d{2})[Tt](\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d+))?"
              + "(?:[Zz]|([+-])(\\d{2}):(\\d{2}))");

  /** An independent reading of an RFC 3339 date-time with offset (java.time for the calendar). */
  static Instant rfc3339(String text) {
    Matcher m = RFC3339.matcher(text);
    if (!m.matches()) {
      return null;
    }
    LocalDateTime local;
    try {
      local =
          LocalDateTime.of(
              Integer.parseInt(m.group(1)),
              Integer.parseInt(m.group(2)),
              Integer.parseInt(m.group(3)),
              Integer.parseInt(m.group(4)),
              Integer.parseInt(m.group(5)),
              Integer.parseInt(m.group(6)));
    } catch (DateTimeException e) {
      return null;
    }
    String fraction = m.group(7) == null ? "" : m.group(7);
    int nanos = Integer.parseInt((fraction + "000000000").substring(0, 9));
    int offset = 0;
    if (m.group(8) != null) {
      int hours = Integer.parseInt(m.group(9));
      int minutes = Integer.parseInt(m.group(10));
      if (hours > 23 || minutes > 59) {
        return null;
      }
      offset = (m.group(8).equals("-") ? -1 : 1) * (hours * 3600 + minutes * 60);
    }
    return Instant.ofEpochSecond(local.toEpochSecond(ZoneOffset.UTC) - offset, nanos);
  }

  /**
   * Parses, and checks what either outcome must be: an envelope holding the body and fields that
   * are Unicode text, or an EnvelopeException with a reason, a stable code and a short message. Any
   * other exception or error escapes and fails the property.
   */
  private static Outcome parse(EnvelopeParser parser, byte[] body) {
    try {
      Envelope e = parser.parse(body);
      assertThat(e.raw()).isSameAs(body);
      // The run id becomes the Kafka key and the ids Redis keys, as UTF-8: a field must survive
      // that encoding, or distinct ids collide and the processor reads a key that is not the run
      // id.
      for (String field : new String[] {e.requestId(), e.runId(), e.type()}) {
        if (field != null) {
          assertThat(new String(field.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
              .as("a field that survives UTF-8")
              .isEqualTo(field);
          assertThat(isStorable(field)).as("a field a store can hold").isTrue();
        }
      }
      return new Outcome(e, null);
    } catch (EnvelopeException e) {
      assertThat(e.reason()).isNotNull();
      assertThat(e.code()).isEqualTo(e.reason().name().toLowerCase(Locale.ROOT));
      assertThat(e.getMessage()).isNotBlank().hasSizeLessThan(MAX_MESSAGE);
      return new Outcome(null, e);
    }
  }

  /**
   * The parse returned exactly the fields {@code reading} found, or, where it found failures,
   * failed with one of them; the outcome's label.
   */
  private static Object assertReadAs(Outcome o, Reading reading) {
    if (reading.failures().isEmpty()) {
      assertThat(o.failure()).as("expected to parse").isNull();
      assertThat(o.envelope().requestId()).isEqualTo(reading.requestId());
      assertThat(o.envelope().runId()).isEqualTo(reading.runId());
      assertThat(o.envelope().createdAt()).isEqualTo(reading.createdAt());
      assertThat(o.envelope().type()).isEqualTo(reading.type());
    } else {
      assertThat(o.failure()).as("expected one of %s", reading.failures()).isNotNull();
      assertThat(reading.failures()).contains(Map.entry(o.failure().reason(), o.failure().field()));
    }
    return outcome(o);
  }

  /** What a parse did, as a label for coverage: "parsed", or the failure's reason. */
  private static Object outcome(Outcome o) {
    return o.failure() == null ? "parsed" : o.failure().reason();
  }

  // ---- Generators (the primitives are dev.runlane.common.Generators) ----

  /** Text over valid code points, rich in what JSON must escape. */
  static String text(Random r, int min, int max) {
    int length = between(r, min, max);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < length; i++) {
      sb.appendCodePoint(
          switch (weighted(r, 10, 2, 1, 2, 1)) {
            case 0 -> between(r, 0x20, 0x7e);
            case 1 ->
                oneOf(r, (int) '"', (int) '\\', (int) '/', 0, 0x7f, 0x2028, 0x2029, 0xfeff, 0xfffd);
            case 2 -> between(r, 0, 0x1f);
            case 3 -> bmpOutsideAscii(r);
            default -> between(r, 0x10000, Character.MAX_CODE_POINT);
          });
    }
    return sb.toString();
  }

  /** Text holding an unpaired surrogate: legal JSON only as an escape, and not Unicode. */
  static String withUnpairedSurrogate(Random r) {
    while (true) {
      String before = text(r, 0, 8);
      char surrogate = oneOf(r, '\ud800', '\udbff', '\udc00', '\udfff');
      String after = text(r, 0, 8);
      String t = before + surrogate + after;
      if ((after.isEmpty() || !Character.isLowSurrogate(after.charAt(0))) && !isUnicode(t)) {
        return t;
      }
    }
  }

  static boolean isUnicode(String s) {
    return s.codePoints().noneMatch(cp -> cp >= 0xd800 && cp <= 0xdfff);
  }

  /** No U+0000 and at most the bound in UTF-8 bytes, counted by the JDK's encoder. */
  static boolean isStorable(String s) {
    return s.indexOf('\0') < 0
        && s.getBytes(StandardCharsets.UTF_8).length <= EnvelopeParser.MAX_FIELD_BYTES;
  }

  /**
   * Unicode text no store downstream holds: with U+0000, or just over the bound in UTF-8 bytes (in
   * characters of any width, so often fewer chars than the bound).
   */
  static String unstorable(Random r) {
    if (r.nextBoolean()) {
      String t = storableText(r, 0, 20);
      int at = t.offsetByCodePoints(0, between(r, 0, t.codePointCount(0, t.length())));
      return t.substring(0, at) + '\0' + t.substring(at);
    }
    StringBuilder sb = new StringBuilder();
    int bytes = 0;
    int over = EnvelopeParser.MAX_FIELD_BYTES + between(r, 1, 4);
    while (bytes < over) {
      String c = storableText(r, 1, 1);
      sb.append(c);
      bytes += c.getBytes(StandardCharsets.UTF_8).length;
    }
    return sb.toString();
  }

  /** {@link #text}, with U+0000 (which no store downstream holds) written as U+0001. */
  static String storableText(Random r, int min, int max) {
    return text(r, min, max).replace('\0', '\u0001');
  }

  static Style style(Random r) {
    return new Style(oneOf(r, Escapes.values()), oneOf(r, "", " ", "\n", "\t", " \r\n "));
  }

  static Stamp stamp(Random r) {
    int year = between(r, 0, 9999);
    int month = between(r, 1, 12);
    LocalDate date =
        LocalDate.of(year, month, between(r, 1, YearMonth.of(year, month).lengthOfMonth()));
    int h = between(r, 0, 23);
    int mi = between(r, 0, 59);
    int s = between(r, 0, 59);
    String fraction = digits(r, 0, 12);
    char sep = oneOf(r, 'T', 't');
    String offset;
    int offsetSeconds;
    if (r.nextBoolean()) {
      offset = oneOf(r, "Z", "z");
      offsetSeconds = 0;
    } else {
      int sign = oneOf(r, 1, -1);
      int oh = between(r, 0, 23);
      int om = between(r, 0, 59);
      offset = String.format("%s%02d:%02d", sign > 0 ? "+" : "-", oh, om);
      offsetSeconds = sign * (oh * 3600 + om * 60);
    }
    String text =
        String.format(
            "%04d-%02d-%02d%c%02d:%02d:%02d%s%s",
            date.getYear(),
            date.getMonthValue(),
            date.getDayOfMonth(),
            sep,
            h,
            mi,
            s,
            fraction.isEmpty() ? "" : "." + fraction,
            offset);
    long seconds = date.atTime(h, mi, s).toEpochSecond(ZoneOffset.UTC) - offsetSeconds;
    int nanos = Integer.parseInt((fraction + "000000000").substring(0, 9));
    return new Stamp(text, Instant.ofEpochSecond(seconds, nanos));
  }

  private static String digits(Random r, int min, int max) {
    int length = between(r, min, max);
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append((char) ('0' + r.nextInt(10)));
    }
    return sb.toString();
  }

  /** Valid stamps, stamps with a few characters changed, and odd cases. */
  static String timestampLike(Random r) {
    return switch (weighted(r, 4, 4, 1, 1)) {
      case 0 -> stamp(r).text();
      case 1 -> {
        StringBuilder sb = new StringBuilder(stamp(r).text());
        int edits = between(r, 1, 3);
        for (int i = 0; i < edits; i++) {
          int kind = between(r, 0, 2);
          int at = between(r, 0, sb.length());
          char c =
              oneOf(
                  r, '0', '1', '2', '3', '5', '6', '9', '-', ':', '.', 'T', 't', 'Z', 'z', '+', ' ',
                  '\u0663', '\uff19');
          if (kind == 0 || at == sb.length()) {
            sb.insert(at, c);
          } else if (kind == 1) {
            sb.setCharAt(at, c);
          } else {
            sb.deleteCharAt(at);
          }
        }
        yield sb.toString();
      }
      case 2 ->
          oneOf(
              r,
              "2024-02-29T00:00:00Z",
              "2023-02-29T00:00:00Z",
              "0000-01-01T00:00:00Z",
              "9999-12-31T23:59:59.999999999999-23:59",
              "2026-11-29T23:59:60Z",
              "2026-11-29T24:00:00Z",
              "2026-11-29T10:00:00+24:00",
              "2026-11-29T10:00:00+23:60",
              "2026-11-29T10:00:00.Z",
              "2026-11-29T10:00:00.1",
              "+2026-11-29T10:00:00Z",
              "2026-11-29T10:00:00Z ",
              "");
      default -> text(r, 0, 30);
    };
  }

  /** Keys, often the target names or near misses, so that random documents hit the pointers. */
  static String key(Random r) {
    return switch (weighted(r, 4, 1, 3)) {
      case 0 -> oneOf(r, "request_id", "created_at", "type", "run_id", "data");
      case 1 ->
          oneOf(
              r,
              "Request_id",
              "request_id ",
              "run_id\u0000",
              "data/run_id",
              "",
              "~",
              "/",
              "\u2028");
      default -> text(r, 0, 12);
    };
  }

  /** A key, but none of {@code excluded}. */
  static String keyOtherThan(Random r, Set<String> excluded) {
    while (true) {
      String key = key(r);
      if (!excluded.contains(key)) {
        return key;
      }
    }
  }

  static Json scalar(Random r) {
    return switch (weighted(r, 3, 1, 2, 2, 1, 1)) {
      case 0 -> new Str(text(r, 0, 20));
      case 1 -> new Str(withUnpairedSurrogate(r));
      case 2 -> new Str(stamp(r).text());
      case 3 ->
          new Num(
              oneOf(
                  r,
                  "0",
                  "-0",
                  "7",
                  "-12",
                  "3.25",
                  "1e10",
                  "1E-7",
                  "-2.5e+3",
                  "0.0",
                  "1e400",
                  "123456789012345678901234567890"));
      case 4 -> new Bool(r.nextBoolean());
      default -> new Null();
    };
  }

  /** Any JSON value nested at most {@code depth} containers deep. */
  static Json value(Random r, int depth) {
    if (depth == 0) {
      return scalar(r);
    }
    return switch (weighted(r, 4, 1, 2)) {
      case 0 -> scalar(r);
      case 1 -> new Arr(listOf(r, 0, 4, () -> value(r, depth - 1)));
      default -> object(r, () -> value(r, depth - 1));
    };
  }

  /** An object of up to 5 members, keys from {@link #key}, values from {@code values}. */
  private static Obj object(Random r, Supplier<Json> values) {
    return new Obj(listOf(r, 0, 5, () -> Map.entry(key(r), values.get())));
  }

  /**
   * Documents: any value; a random object; or a valid envelope with a target field replaced by a
   * random value, an identifying one by text no store holds or created_at by a timestamp-like
   * string, a target member written twice, or random members (often target names, so duplicates)
   * added to it or to its data.
   */
  static Json document(Random r) {
    return switch (weighted(r, 1, 2, 3, 3, 2, 1, 1)) {
      case 0 -> value(r, 5); // often a scalar root
      case 1 -> object(r, () -> value(r, 4));
      case 2 -> {
        Valid v = valid(r);
        String key = oneOf(r, "request_id", "created_at", "type", "run_id", "data", "data/run_id");
        Json value = value(r, 2);
        if (key.equals("data/run_id")) {
          yield v.doc().get("data") instanceof Obj d
              ? v.doc().with("data", d.with("run_id", value))
              : v.doc();
        }
        yield v.doc().get(key) == null ? v.doc() : v.doc().with(key, value);
      }
      case 3 -> {
        Obj target = valid(r).doc();
        List<Map.Entry<String, Json>> extra = listOf(r, 1, 3, () -> Map.entry(key(r), value(r, 2)));
        int at = r.nextInt();
        boolean intoData = r.nextBoolean();
        if (intoData && target.get("data") instanceof Obj d) {
          yield target.with("data", insert(d, extra, at));
        }
        yield insert(target, extra, at);
      }
      case 4 -> valid(r).doc().with("created_at", new Str(timestampLike(r)));
      case 5 -> {
        Obj doc = valid(r).doc();
        Str value = new Str(unstorable(r));
        String key = oneOf(r, "request_id", "type", "run_id", "data/run_id");
        if (key.equals("data/run_id")) {
          yield doc.get("data") instanceof Obj d ? doc.with("data", d.with("run_id", value)) : doc;
        }
        yield doc.get(key) == null ? doc : doc.with(key, value);
      }
      default ->
          valid(r)
              .doc()
              .duplicating(oneOf(r, "request_id", "created_at", "type", "run_id", "data"));
    };
  }

  private static Obj insert(Obj o, List<Map.Entry<String, Json>> extra, int at) {
    List<Map.Entry<String, Json>> members = new ArrayList<>(o.members());
    members.addAll(Math.floorMod(at, members.size() + 1), extra);
    return new Obj(members);
  }

  /** Where the run id is: nested, top level, both (nested wins), or top level with a decoy data. */
  enum RunIdAt {
    DATA,
    TOP,
    BOTH,
    TOP_DATA_NULL,
    TOP_DATA_NOT_AN_OBJECT
  }

  static Valid valid(Random r) {
    String requestId = storableText(r, 1, 40);
    String runId = storableText(r, 1, 40);
    RunIdAt at = oneOf(r, RunIdAt.values());
    Stamp stamp = stamp(r);
    // The type: absent, null, empty (all read as null), or a value.
    Json typeJson;
    String type;
    switch (weighted(r, 1, 1, 1, 4)) {
      case 0 -> {
        typeJson = null;
        type = null;
      }
      case 1 -> {
        typeJson = new Null();
        type = null;
      }
      case 2 -> {
        typeJson = new Str("");
        type = null;
      }
      default -> {
        type = storableText(r, 1, 30);
        typeJson = new Str(type);
      }
    }
    List<Map.Entry<String, Json>> top =
        listOf(r, 0, 4, () -> Map.entry(keyOtherThan(r, TOP_TARGETS), value(r, 3)));
    List<Map.Entry<String, Json>> data =
        listOf(r, 0, 4, () -> Map.entry(keyOtherThan(r, Set.of("run_id")), value(r, 3)));
    Json notAnObject;
    if (r.nextBoolean()) {
      do {
        notAnObject = scalar(r);
      } while (notAnObject instanceof Null);
    } else {
      notAnObject = new Arr(List.of(value(r, 2)));
    }
    Style style = style(r);

    top.add(Map.entry("request_id", new Str(requestId)));
    top.add(Map.entry("created_at", new Str(stamp.text())));
    if (typeJson != null) {
      top.add(Map.entry("type", typeJson));
    }
    switch (at) {
      case DATA -> data.add(Map.entry("run_id", new Str(runId)));
      case TOP -> top.add(Map.entry("run_id", new Str(runId)));
      case BOTH -> {
        data.add(Map.entry("run_id", new Str(runId)));
        top.add(Map.entry("run_id", new Str("decoy-" + runId)));
      }
      case TOP_DATA_NULL -> {
        data.add(Map.entry("run_id", new Null()));
        top.add(Map.entry("run_id", new Str(runId)));
      }
      case TOP_DATA_NOT_AN_OBJECT -> top.add(Map.entry("run_id", new Str(runId)));
    }
    Collections.shuffle(top, r);
    Collections.shuffle(data, r);
    List<Map.Entry<String, Json>> members = new ArrayList<>(top);
    if (at == RunIdAt.TOP_DATA_NOT_AN_OBJECT) {
      members.add(0, Map.entry("data", notAnObject));
    } else if (!data.isEmpty() || at != RunIdAt.TOP) {
      members.add(members.size() / 2, Map.entry("data", new Obj(data)));
    }
    return new Valid(new Obj(members), requestId, runId, stamp.instant(), type, style);
  }

  /** UTF-8 as RFC 8259 requires, and the encodings Jackson also detects. */
  static Charset encoding(Random r) {
    if (weighted(r, 6, 1) == 0) {
      return StandardCharsets.UTF_8;
    }
    return oneOf(
        r,
        StandardCharsets.UTF_16BE,
        StandardCharsets.UTF_16LE,
        StandardCharsets.UTF_16,
        Charset.forName("UTF-32BE"),
        Charset.forName("UTF-32LE"));
  }

  /** One change to a body's bytes. */
  record Mutation(int kind, int position, byte[] bytes) {

    byte[] apply(byte[] body) {
      int at = Math.floorMod(position, body.length + 1);
      ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + bytes.length);
      out.write(body, 0, at);
      switch (kind) {
        case 0 -> { // insert
          out.writeBytes(bytes);
          out.write(body, at, body.length - at);
        }
        case 1 -> { // overwrite
          out.writeBytes(bytes);
          int skip = Math.min(body.length - at, bytes.length);
          out.write(body, at + skip, body.length - at - skip);
        }
        case 2 -> { // truncate here
        }
        default -> { // delete up to bytes.length bytes
          int skip = Math.min(body.length - at, Math.max(1, bytes.length));
          out.write(body, at + skip, body.length - at - skip);
        }
      }
      return out.toByteArray();
    }
  }

  static Mutation mutation(Random r) {
    return new Mutation(between(r, 0, 3), r.nextInt(), interestingBytes(r));
  }

  /** Byte runs that break JSON or UTF-8 in interesting ways. */
  static byte[] interestingBytes(Random r) {
    return switch (weighted(r, 3, 3, 2)) {
      case 0 -> bytes(r, 1, 4);
      case 1 ->
          oneOf(
                  r,
                  "{",
                  "}",
                  "[",
                  "]",
                  "\"",
                  ":",
                  ",",
                  "\\",
                  "\\u",
                  "\\ud800",
                  "\\udc00\\ud800",
                  "null",
                  "true",
                  "-",
                  "1e",
                  "0x1",
                  "NaN",
                  "\"request_id\":",
                  "\"data\":{",
                  "/*",
                  "//",
                  "'",
                  "\u0000",
                  "\t",
                  "\uFEFF")
              .getBytes(StandardCharsets.UTF_8);
      default ->
          oneOf(
                  r,
                  new byte[] {(byte) 0xC3}, // lead byte, no continuation
                  new byte[] {(byte) 0x80}, // lone continuation
                  new byte[] {(byte) 0xFF},
                  new byte[] {(byte) 0xC0, (byte) 0xAF}, // overlong '/'
                  new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, // encoded surrogate
                  new byte[] {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, // above U+10FFFF
                  new byte[] {(byte) 0xFE, (byte) 0xFF}, // UTF-16 BOM
                  new byte[] {0, 0, 0})
              .clone();
    };
  }

  /** Random bytes, JSON-ish token soup (often inside an object), and UTF-16/32 lookalikes. */
  static byte[] anyBytes(Random r) {
    return switch (weighted(r, 2, 2, 2, 1, 1, 1)) {
      case 0 -> bytes(r, 0, 300);
      case 1 -> soup(r);
      case 2 -> concat("{".getBytes(StandardCharsets.UTF_8), soup(r));
      case 3 -> concat(new byte[] {0, 0, 0, '{'}, soup(r));
      case 4 -> concat(new byte[] {'{', 0}, soup(r));
      default -> concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, soup(r));
    };
  }

  /** Up to 40 runs of {@link #interestingBytes}. */
  private static byte[] soup(Random r) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    listOf(r, 0, 40, () -> interestingBytes(r)).forEach(out::writeBytes);
    return out.toByteArray();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Ill-formed UTF-8 (RFC 3629), and escapes of unpaired surrogates, as bytes inside a string. */
  static byte[] notUnicode(Random r) {
    return switch (weighted(r, 3, 1, 1)) {
      case 0 ->
          oneOf(
                  r,
                  new byte[] {(byte) 0x80},
                  new byte[] {(byte) 0xC3},
                  new byte[] {(byte) 0xFF},
                  new byte[] {(byte) 0xC0, (byte) 0xAF},
                  new byte[] {(byte) 0xE0, (byte) 0x80, (byte) 0xAF},
                  new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
                  new byte[] {(byte) 0xF0, (byte) 0x80, (byte) 0x80, (byte) 0xAF},
                  new byte[] {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
                  new byte[] {(byte) 0xF7, (byte) 0xBF, (byte) 0xBF, (byte) 0xBF},
                  new byte[] {(byte) 0xF8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80})
              .clone();
      case 1 ->
          new byte[] {
            (byte) between(r, 0xF4, 0xF7),
            (byte) between(r, 0x80, 0xBF),
            (byte) between(r, 0x80, 0xBF),
            (byte) between(r, 0x80, 0xBF)
          };
      default ->
          oneOf(r, "\\ud800", "\\udfff", "\\udc00\\ud800", "\\ud800x")
              .getBytes(StandardCharsets.US_ASCII);
    };
  }

  /**
   * A nesting limit, how many containers to nest in the root object, whether to close them, and the
   * seed that picks each container's kind (array or object).
   */
  record Nesting(int maxDepth, int levels, long kinds, boolean complete) {}

  /** Mostly within a few levels of the limit, sometimes far beyond (up to 100,000 levels). */
  static Nesting nesting(Random r) {
    int limit =
        switch (weighted(r, 6, 1, 1)) {
          case 0 -> between(r, 1, 64);
          case 1 -> oneOf(r, EnvelopeParser.DEFAULT_MAX_DEPTH, EnvelopeParser.MAX_MAX_DEPTH);
          default -> between(r, 1, EnvelopeParser.MAX_MAX_DEPTH);
        };
    long kinds = r.nextLong();
    boolean complete = r.nextBoolean();
    int levels =
        switch (weighted(r, 8, 1, 1)) {
          case 0 -> Math.max(0, limit - 1 + between(r, -3, 3));
          case 1 -> between(r, 0, 3 * limit);
          default -> between(r, limit, 100_000);
        };
    return new Nesting(limit, levels, kinds, complete);
  }

  // Configured pointers, over few segments so that they overlap and meet the document's keys.

  static String segment(Random r) {
    return switch (weighted(r, 6, 2, 1)) {
      case 0 -> oneOf(r, "a", "b", "0", "1", "2");
      case 1 -> oneOf(r, "01", "-", "~", "/", "a/b", "x~1y", "", "~0");
      default -> text(r, 0, 4);
    };
  }

  static List<String> segments(Random r) {
    return listOf(r, 1, 4, () -> segment(r));
  }

  static Json leaf(Random r) {
    return switch (weighted(r, 3, 2, 2)) {
      case 0 -> new Str(text(r, 1, 10));
      case 1 -> new Str(stamp(r).text());
      default -> scalar(r);
    };
  }

  /** An id to plant: mostly a string, sometimes any leaf. */
  static Json plantedId(Random r) {
    return weighted(r, 5, 1) == 0 ? new Str(text(r, 1, 10)) : leaf(r);
  }

  /** A random tree over the segments, so that pointers also meet arrays, nulls and numbers. */
  static Json tree(Random r, int depth) {
    if (depth == 0) {
      return leaf(r);
    }
    return switch (r.nextInt(3)) {
      case 0 -> leaf(r);
      case 1 -> new Arr(listOf(r, 0, 3, () -> tree(r, depth - 1)));
      default -> new Obj(listOf(r, 0, 4, () -> Map.entry(segment(r), tree(r, depth - 1))));
    };
  }

  static Configured configured(Random r) {
    List<String> req = segments(r);
    List<String> at = segments(r);
    List<List<String>> runs =
        weighted(r, 6, 1) == 0
            ? listOf(r, 1, 4, () -> segments(r))
            : listOf(
                r,
                EnvelopeFields.MAX_RUN_ID_POINTERS,
                EnvelopeFields.MAX_RUN_ID_POINTERS,
                () -> segments(r));
    List<String> type = segments(r);
    int maxDepth = r.nextBoolean() ? between(r, 1, 8) : EnvelopeParser.DEFAULT_MAX_DEPTH;
    Obj root = new Obj(listOf(r, 0, 5, () -> Map.entry(segment(r), tree(r, 3))));
    Plants plants = new Plants(plantedId(r), stamp(r), plantedId(r), leaf(r));
    Style style = style(r);
    // Plant a value at some of the pointers (a bit each), the timestamp a real one.
    int mask = weighted(r, 2, 1) == 0 ? 15 : between(r, 0, 15);
    Json doc = root;
    if ((mask & 1) != 0) {
      doc = plant(doc, req, plants.requestId());
    }
    if ((mask & 2) != 0) {
      doc = plant(doc, at, new Str(plants.createdAt().text()));
    }
    if ((mask & 4) != 0) {
      doc = plant(doc, runs.get(runs.size() - 1), plants.runId());
    }
    if ((mask & 8) != 0) {
      doc = plant(doc, type, plants.type());
    }
    return new Configured(req, at, runs, type, maxDepth, (Obj) doc, style);
  }
}
