package dev.runlane.common.envelope;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.runlane.common.envelope.EnvelopeException.Reason;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class EnvelopeParserTest {

  private static final String VALID =
      "{\"request_id\":\"req-1\",\"created_at\":\"2026-11-29T10:00:00.123Z\","
          + "\"type\":\"run.completed\",\"data\":{\"run_id\":\"run-7\",\"status\":\"ok\"}}";

  private final EnvelopeParser parser = EnvelopeParser.withDefaults();

  @Test
  void readsDefaultFields() throws EnvelopeException {
    byte[] body = bytes(VALID);

    Envelope e = parser.parse(body);

    assertThat(e.requestId()).isEqualTo("req-1");
    assertThat(e.runId()).isEqualTo("run-7");
    assertThat(e.createdAt()).isEqualTo(Instant.parse("2026-11-29T10:00:00.123Z"));
    assertThat(e.type()).isEqualTo("run.completed");
    assertThat(e.raw()).isSameAs(body);
  }

  /** The run id is read at {@code /data/run_id}, else at {@code /run_id}. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "falls back to the top-level run id"
            + "|{\"run_id\":\"run-top\",\"request_id\":\"r\",\"created_at\":\"2026-11-29T10:00:00Z\","
            + "\"data\":{\"other\":1}}|run-top",
        "the nested run id wins over the top-level one"
            + "|{\"run_id\":\"top\",\"request_id\":\"r\",\"created_at\":\"2026-11-29T10:00:00Z\","
            + "\"data\":{\"run_id\":\"nested\"}}|nested",
        "a null nested run id falls back"
            + "|{\"data\":{\"run_id\":null},\"run_id\":\"top\",\"request_id\":\"r\","
            + "\"created_at\":\"2026-11-29T10:00:00Z\"}|top"
      })
  void readsTheRunIdAtItsPointers(String why, String body, String runId) throws EnvelopeException {
    assertThat(parse(body).runId()).isEqualTo(runId);
  }

  @Test
  void typeIsOptional() throws EnvelopeException {
    Envelope e =
        parse("{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}");

    assertThat(e.type()).isNull();
  }

  @Test
  void readsCustomPointersIncludingArrayIndexAndEscapes() throws EnvelopeException {
    EnvelopeFields fields =
        EnvelopeFields.of(
            "/meta/id", "/meta/at", List.of("/subjects/1/id", "/a~1b"), "/meta/kind~0x");
    EnvelopeParser custom = new EnvelopeParser(fields, 8);

    Envelope e =
        custom.parse(
            bytes(
                "{\"meta\":{\"id\":\"m1\",\"at\":\"2026-11-29T11:00:00+01:00\",\"kind~x\":\"k\"},"
                    + "\"subjects\":[{\"id\":\"s0\"},{\"id\":\"s1\"}],\"request_id\":\"ignored\"}"));

    assertThat(e.requestId()).isEqualTo("m1");
    assertThat(e.runId()).isEqualTo("s1");
    assertThat(e.createdAt()).isEqualTo(Instant.parse("2026-11-29T10:00:00Z"));
    assertThat(e.type()).isEqualTo("k");
  }

  @Test
  void customFallbackPointerWithEscapedSlash() throws EnvelopeException {
    EnvelopeFields fields =
        EnvelopeFields.of("/request_id", "/created_at", List.of("/x/run", "/a~1b"), "/type");

    Envelope e =
        new EnvelopeParser(fields, 8)
            .parse(
                bytes(
                    "{\"a/b\":\"slash\",\"request_id\":\"r\",\"created_at\":\"2026-11-29T10:00:00Z\"}"));

    assertThat(e.runId()).isEqualTo("slash");
  }

  @Test
  void keepsUnicode() throws EnvelopeException {
    Envelope e =
        parse(
            "{\"request_id\":\"réq-✓-\\u00e9-😀\",\"run_id\":\"лан\","
                + "\"created_at\":\"2026-11-29T10:00:00Z\",\"type\":\"運行\"}");

    assertThat(e.requestId()).isEqualTo("réq-✓-é-😀");
    assertThat(e.runId()).isEqualTo("лан");
    assertThat(e.type()).isEqualTo("運行");
  }

  @Test
  void readsBigBodyWithFieldsAtTheEnd() throws EnvelopeException {
    StringBuilder sb = new StringBuilder("{\"data\":{\"items\":[");
    for (int i = 0; i < 20_000; i++) {
      sb.append(i == 0 ? "" : ",")
          .append("{\"run_id\":\"not-this-")
          .append(i)
          .append("\",\"v\":[1,2,{\"x\":\"y\"}]}");
    }
    sb.append("],\"run_id\":\"run-big\"},\"request_id\":\"r-big\",")
        .append("\"created_at\":\"2026-11-29T10:00:00Z\"}");
    byte[] body = bytes(sb.toString());
    assertThat(body.length).isGreaterThan(500_000);

    Envelope e = parser.parse(body);

    assertThat(e.runId()).isEqualTo("run-big");
    assertThat(e.requestId()).isEqualTo("r-big");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "   ",
        "not json",
        "{\"request_id\":\"r\"",
        "{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"} x",
        "{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"} {}",
        "{\"request_id\":\"r\",}",
        "{'request_id':'r'}"
      })
  void rejectsNonJson(String body) {
    assertThat(reasonOf(body)).isEqualTo(Reason.NOT_JSON);
  }

  @Test
  void rejectsInvalidUtf8AsNotJson() {
    byte[] body =
        bytes("{\"request_id\":\"r?\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}");
    body[16] = (byte) 0xC3; // a lead byte followed by '"'

    EnvelopeException e = catchThrowableOfType(EnvelopeException.class, () -> parser.parse(body));

    assertThat(e.reason()).isEqualTo(Reason.NOT_JSON);
  }

  /** Jackson decodes each of these without complaint; JSON between systems is UTF-8 only. */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "overlong '/' in data, c0af",
    "overlong NUL in request_id, c080",
    "overlong three-byte form, e08080",
    "overlong four-byte form, f08f8080",
    "UTF-8-encoded surrogate, eda080",
    "code point above U+10FFFF, f4908080",
    "lone continuation byte, 80",
    "truncated sequence, e282",
    "byte never in UTF-8, ff"
  })
  void rejectsBytesThatAreNotWellFormedUtf8(String name, String hex) {
    byte[] bad = java.util.HexFormat.of().parseHex(hex);
    byte[] body =
        concat(
            bytes("{\"request_id\":\"r"),
            bad,
            bytes("\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}"));

    EnvelopeException e = catchThrowableOfType(EnvelopeException.class, () -> parser.parse(body));

    assertThat(e.reason()).isEqualTo(Reason.NOT_JSON);
    assertThat(e.getMessage())
        .isEqualTo(
            String.format("body is not UTF-8 JSON: byte 0x%02X at offset 16", bad[0] & 0xFF));
  }

  /** Jackson would read these as UTF-16 or UTF-32 from their zero bytes, and accept them. */
  @ParameterizedTest
  @ValueSource(strings = {"UTF-16LE", "UTF-16BE", "UTF-16", "UTF-32BE", "UTF-32LE"})
  void rejectsJsonInAnotherEncoding(String charset) {
    byte[] body = VALID.getBytes(java.nio.charset.Charset.forName(charset));

    assertThat(reasonOf(body)).isEqualTo(Reason.NOT_JSON);
  }

  @Test
  void acceptsEveryWellFormedUtf8Length() throws EnvelopeException {
    String text =
        "\u00e9 \u20ac \ud83d\ude00 \u007f \u0080 \u07ff \u0800 \uffff \ud800\udc00 \udbff\udfff";
    byte[] body =
        bytes(
            "{\"request_id\":\"r-"
                + text
                + "\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}");

    assertThat(parser.parse(body).requestId()).isEqualTo("r-" + text);
    assertThat(Utf8.firstMalformedByte(bytes("x".repeat(17) + text + "y".repeat(9)))).isEqualTo(-1);
  }

  @Test
  void acceptsAUtf8ByteOrderMark() throws EnvelopeException {
    byte[] json = bytes(VALID);
    byte[] body = new byte[json.length + 3];
    body[0] = (byte) 0xEF;
    body[1] = (byte) 0xBB;
    body[2] = (byte) 0xBF;
    System.arraycopy(json, 0, body, 3, json.length);

    assertThat(parser.parse(body).requestId()).isEqualTo("req-1");
  }

  @Test
  void rejectsRunIdThatIsNotUnicode() {
    // F4 90 80 80 would be above U+10FFFF; Jackson reads it as two unpaired surrogates.
    byte[] body =
        bytes(
            "{\"request_id\":\"r\",\"run_id\":\"u????\",\"created_at\":\"2026-11-29T10:00:00Z\"}");
    int at = new String(body, StandardCharsets.UTF_8).indexOf("????");
    body[at] = (byte) 0xF4;
    body[at + 1] = (byte) 0x90;
    body[at + 2] = (byte) 0x80;
    body[at + 3] = (byte) 0x80;

    EnvelopeException e = catchThrowableOfType(EnvelopeException.class, () -> parser.parse(body));

    // Refused before any field is read: the body is not UTF-8.
    assertThat(e.reason()).isEqualTo(Reason.NOT_JSON);
    assertThat(e.getMessage()).contains("not UTF-8");
  }

  @Test
  void keepsEscapedSurrogatePair() throws EnvelopeException {
    String escaped = "\\ud83d\\ude00"; // as JSON escapes of the two UTF-16 halves of U+1F600
    String body =
        "{\"request_id\":\""
            + escaped
            + "\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}";

    assertThat(parse(body).requestId()).isEqualTo("\ud83d\ude00");
  }

  /** The identifying fields, by JSON Pointer; the run id at both of its default pointers. */
  private static final String[] IDENTIFYING = {"/request_id", "/data/run_id", "/run_id", "/type"};

  @ParameterizedTest
  @ValueSource(strings = {"/request_id", "/data/run_id", "/run_id", "/type"})
  void rejectsAnEscapedNulInAnIdentifyingFieldAsUnstorable(String field) {
    EnvelopeException e = failure(withField(field, "\"run.x\\u0000y\""));

    assertThat(e.reason()).isEqualTo(Reason.UNSTORABLE_FIELD);
    assertThat(e.code()).isEqualTo("unstorable_field");
    assertThat(e.field()).isEqualTo(field);
    assertThat(e.getMessage()).contains(field).contains("U+0000").doesNotContain("\0");
  }

  /** Each identifying field, with characters of one to four bytes of UTF-8. */
  static Stream<Arguments> fieldsAndCharacters() {
    return Stream.of(
        Arguments.of("/request_id", "a"),
        Arguments.of("/request_id", "é"),
        Arguments.of("/request_id", "€"),
        Arguments.of("/request_id", "😀"),
        Arguments.of("/data/run_id", "é"),
        Arguments.of("/data/run_id", "😀"),
        Arguments.of("/run_id", "€"),
        Arguments.of("/run_id", "😀"),
        Arguments.of("/type", "a"),
        Arguments.of("/type", "€"));
  }

  /**
   * Exactly {@link EnvelopeParser#MAX_FIELD_BYTES} bytes of UTF-8 is read, whatever the width of
   * its characters: 1,024 ASCII characters, or 256 four-byte ones (512 chars).
   */
  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("fieldsAndCharacters")
  void readsAnIdentifyingFieldOfExactlyTheBoundInBytes(String field, String character)
      throws EnvelopeException {
    String value = ofUtf8Bytes(EnvelopeParser.MAX_FIELD_BYTES, character);

    Envelope e = parse(withField(field, "\"" + value + "\""));

    assertThat(identifying(e, field)).isEqualTo(value);
  }

  /** One byte more is refused, although the multi-byte values are far fewer characters. */
  @ParameterizedTest(name = "{0} of {1}")
  @MethodSource("fieldsAndCharacters")
  void rejectsAnIdentifyingFieldOneByteOverTheBoundAsUnstorable(String field, String character) {
    String value = ofUtf8Bytes(EnvelopeParser.MAX_FIELD_BYTES + 1, character);

    EnvelopeException e = failure(withField(field, "\"" + value + "\""));

    assertThat(e.reason()).isEqualTo(Reason.UNSTORABLE_FIELD);
    assertThat(e.field()).isEqualTo(field);
    assertThat(e.getMessage())
        .contains(field)
        .contains(Integer.toString(EnvelopeParser.MAX_FIELD_BYTES))
        .hasSizeLessThan(200);
  }

  @Test
  void countsEscapedCharactersByTheirUtf8Bytes() {
    // 342 escaped euro signs: 2,052 characters of JSON, 342 chars, 1,026 bytes of UTF-8.
    EnvelopeException e = failure(withField("/request_id", "\"" + "\\u20ac".repeat(342) + "\""));

    assertThat(e.reason()).isEqualTo(Reason.UNSTORABLE_FIELD);
  }

  @Test
  void createdAtWithNulIsStillABadTimestamp() {
    EnvelopeException e =
        failure("{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":\"2026\\u0000\"}");

    assertThat(e.reason()).isEqualTo(Reason.BAD_TIMESTAMP);
  }

  @Test
  void aLoneSurrogateIsNotJsonEvenWhereTheValueIsAlsoUnstorable() {
    EnvelopeException e = failure(withField("/type", "\"\\u0000\\ud800\""));

    assertThat(e.reason()).isEqualTo(Reason.NOT_JSON);
  }

  @Test
  void withoutStorageLimitsReadsNulAndLongIdentifyingFields() throws EnvelopeException {
    EnvelopeParser reader = EnvelopeParser.withoutStorageLimits();
    String nul = "run.x\0y";
    String longer = ofUtf8Bytes(EnvelopeParser.MAX_FIELD_BYTES + 1, "😀");

    for (String field : IDENTIFYING) {
      Envelope withNul = reader.parse(bytes(withField(field, "\"run.x\\u0000y\"")));
      Envelope withLong = reader.parse(bytes(withField(field, "\"" + longer + "\"")));

      assertThat(identifying(withNul, field)).as(field).isEqualTo(nul);
      assertThat(identifying(withLong, field)).as(field).isEqualTo(longer);
    }
  }

  @Test
  void withoutStorageLimitsStillRefusesALoneSurrogate() {
    EnvelopeParser reader = EnvelopeParser.withoutStorageLimits();

    for (String field : IDENTIFYING) {
      byte[] body = bytes(withField(field, "\"x\\udc00\""));

      EnvelopeException e = catchThrowableOfType(EnvelopeException.class, () -> reader.parse(body));

      assertThat(e).as(field).isNotNull();
      assertThat(e.reason()).isEqualTo(Reason.NOT_JSON);
      assertThat(e.field()).isEqualTo(field);
    }
  }

  @Test
  void errorMessageEchoesLittleOfTheInput() {
    String longToken = "x".repeat(10_000);

    EnvelopeException e = failure("{\"a\":" + longToken + "}");

    assertThat(e.reason()).isEqualTo(Reason.NOT_JSON);
    assertThat(e.getMessage()).hasSizeLessThan(250).doesNotContain("x".repeat(100));
  }

  @ParameterizedTest
  @ValueSource(strings = {"[]", "[{\"request_id\":\"r\"}]", "\"text\"", "42", "null", "true"})
  void rejectsNonObjectRoot(String body) {
    assertThat(reasonOf(body)).isEqualTo(Reason.NOT_AN_OBJECT);
  }

  @Test
  void rejectsMissingRequestId() {
    EnvelopeException e = failure("{\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}");

    assertThat(e.reason()).isEqualTo(Reason.MISSING_FIELD);
    assertThat(e.field()).isEqualTo("/request_id");
    assertThat(e.code()).isEqualTo("missing_field");
    assertThat(e.getMessage()).contains("/request_id");
  }

  @Test
  void rejectsMissingRunId() {
    EnvelopeException e =
        failure("{\"request_id\":\"r\",\"data\":{},\"created_at\":\"2026-11-29T10:00:00Z\"}");

    assertThat(e.reason()).isEqualTo(Reason.MISSING_FIELD);
    assertThat(e.field()).isEqualTo("/data/run_id");
    assertThat(e.getMessage()).contains("/data/run_id").contains("/run_id");
  }

  /** Each body fails with the reason, at the field. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "an escaped lone surrogate in the request id"
            + "|{\"request_id\":\"r\\ud800\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}"
            + "|NOT_JSON|/request_id",
        "a duplicate request id, ambiguous"
            + "|{\"request_id\":\"a\",\"request_id\":\"b\",\"run_id\":\"u\","
            + "\"created_at\":\"2026-11-29T10:00:00Z\"}|NOT_JSON|/request_id",
        "a null request id, missing"
            + "|{\"request_id\":null,\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}"
            + "|MISSING_FIELD|/request_id",
        "no created_at|{\"request_id\":\"r\",\"run_id\":\"u\"}|MISSING_FIELD|/created_at"
      })
  void rejectsWithTheReasonAtTheField(String why, String body, Reason reason, String field) {
    EnvelopeException e = failure(body);

    assertThat(e.reason()).isEqualTo(reason);
    assertThat(e.field()).isEqualTo(field);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"request_id\":42,\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}|/request_id",
        "{\"request_id\":\"\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}|/request_id",
        "{\"request_id\":{\"a\":1},\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\"}|/request_id",
        "{\"request_id\":\"r\",\"data\":{\"run_id\":[1]},\"created_at\":\"2026-11-29T10:00:00Z\"}|/data/run_id",
        "{\"request_id\":\"r\",\"run_id\":true,\"created_at\":\"2026-11-29T10:00:00Z\"}|/run_id",
        "{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":1764410400}|/created_at",
        "{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\",\"type\":7}|/type"
      })
  void rejectsWrongType(String body, String field) {
    EnvelopeException e = failure(body);

    assertThat(e.reason()).isEqualTo(Reason.WRONG_TYPE);
    assertThat(e.field()).isEqualTo(field);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "2026-11-29T10:00:00",
        "2026-11-29 10:00:00Z",
        "2026-11-29T10:00Z",
        "2026-11-29",
        "2026-13-01T10:00:00Z",
        "2026-02-30T10:00:00Z",
        "2026-11-29T24:00:00Z",
        "2026-11-29T10:00:60Z",
        "2026-11-29T10:00:00.Z",
        "2026-11-29T10:00:00+0100",
        "2026-11-29T10:00:00+01",
        "2026-11-29T10:00:00+01:00:00",
        "2026-11-29T10:00:00Zjunk",
        "1764410400",
        "yesterday"
      })
  void rejectsBadTimestamp(String createdAt) {
    EnvelopeException e =
        failure("{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":\"" + createdAt + "\"}");

    assertThat(e.reason()).isEqualTo(Reason.BAD_TIMESTAMP);
    assertThat(e.field()).isEqualTo("/created_at");
  }

  @ParameterizedTest
  @CsvSource({
    "2026-11-29T10:00:00Z, 2026-11-29T10:00:00Z",
    "2026-11-29t10:00:00z, 2026-11-29T10:00:00Z",
    "2026-11-29T11:00:00+01:00, 2026-11-29T10:00:00Z",
    "2026-11-29T05:30:00-04:30, 2026-11-29T10:00:00Z",
    "2026-11-29T10:00:00-00:00, 2026-11-29T10:00:00Z",
    "2026-11-29T10:00:00.5Z, 2026-11-29T10:00:00.500Z",
    "2026-11-29T10:00:00.123456789Z, 2026-11-29T10:00:00.123456789Z",
    "2026-11-29T10:00:00.1234567891Z, 2026-11-29T10:00:00.123456789Z",
    "2024-02-29T00:00:00Z, 2024-02-29T00:00:00Z"
  })
  void acceptsRfc3339WithOffset(String text, String expected) {
    assertThat(Rfc3339.parse(text)).isEqualTo(Instant.parse(expected));
  }

  @Test
  void rejectsNestingDeeperThanMax() {
    EnvelopeParser shallow = new EnvelopeParser(EnvelopeFields.defaults(), 4);
    String ok = "{\"request_id\":\"r\",\"run_id\":\"u\",\"created_at\":\"2026-11-29T10:00:00Z\",";

    assertThat(catchDepth(shallow, ok + "\"a\":{\"b\":[{}]}}")).isNull();
    EnvelopeException e = catchDepth(shallow, ok + "\"a\":{\"b\":[{\"c\":[]}]}}");
    assertThat(e).isNotNull();
    assertThat(e.reason()).isEqualTo(Reason.TOO_DEEP);
    assertThat(e.code()).isEqualTo("too_deep");
  }

  @Test
  void rejectsHugeNestingWithDefaults() {
    String deep = "{\"a\":" + "[".repeat(5000) + "]".repeat(5000) + "}";

    assertThat(reasonOf(deep)).isEqualTo(Reason.TOO_DEEP);
  }

  @Test
  void fieldsRejectRootPointerAndEmptyRunIdList() {
    assertThatThrownBy(() -> EnvelopeFields.of("", "/c", List.of("/r"), "/t"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EnvelopeFields.of("/i", "/c", List.of(), "/t"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void envelopeToStringHidesBodyAndEqualsComparesBytes() {
    Instant at = Instant.parse("2026-11-29T10:00:00Z");
    Envelope a = new Envelope("r", "u", at, null, bytes("{\"secret\":\"body\"}"));
    Envelope b = new Envelope("r", "u", at, null, bytes("{\"secret\":\"body\"}"));

    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a.toString()).doesNotContain("secret").contains("17 bytes");
    assertThat(a).isNotEqualTo(new Envelope("r", "u", at, null, bytes("{}")));
  }

  /**
   * A valid envelope (request id {@code r}, run id {@code u} at {@code /data/run_id}) with {@code
   * json} as the value at {@code field}; at {@code /run_id} there is no {@code data}, so the run id
   * is read from there.
   */
  private static String withField(String field, String json) {
    String requestId = field.equals("/request_id") ? json : "\"r\"";
    String type = field.equals("/type") ? json : "\"run.completed\"";
    String runId =
        switch (field) {
          case "/data/run_id" -> "\"data\":{\"run_id\":" + json + "}";
          case "/run_id" -> "\"run_id\":" + json;
          default -> "\"data\":{\"run_id\":\"u\"}";
        };
    return "{\"request_id\":"
        + requestId
        + ",\"created_at\":\"2026-11-29T10:00:00Z\",\"type\":"
        + type
        + ","
        + runId
        + "}";
  }

  private static String identifying(Envelope e, String field) {
    return switch (field) {
      case "/request_id" -> e.requestId();
      case "/type" -> e.type();
      default -> e.runId();
    };
  }

  /** Exactly {@code bytes} bytes of UTF-8: {@code character} repeated, after ASCII to fill. */
  private static String ofUtf8Bytes(int bytes, String character) {
    int width = bytes(character).length;
    String value = "a".repeat(bytes % width) + character.repeat(bytes / width);
    assertThat(bytes(value)).hasSize(bytes);
    return value;
  }

  private EnvelopeException catchDepth(EnvelopeParser p, String body) {
    try {
      p.parse(bytes(body));
      return null;
    } catch (EnvelopeException e) {
      return e;
    }
  }

  private Envelope parse(String body) throws EnvelopeException {
    return parser.parse(bytes(body));
  }

  private Reason reasonOf(String body) {
    return failure(body).reason();
  }

  private Reason reasonOf(byte[] body) {
    EnvelopeException e = catchThrowableOfType(EnvelopeException.class, () -> parser.parse(body));
    assertThat(e).as("expected a failure").isNotNull();
    return e.reason();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  private EnvelopeException failure(String body) {
    EnvelopeException e = catchThrowableOfType(EnvelopeException.class, () -> parse(body));
    assertThat(e).as("expected a failure for %s", body).isNotNull();
    return e;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
