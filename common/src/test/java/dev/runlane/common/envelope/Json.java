package dev.runlane.common.envelope;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A JSON value for generated bodies, written by hand (not by Jackson, the library under test) in
 * one of several legal spellings: escapes and whitespace vary, the value does not.
 */
sealed interface Json {

  record Str(String value) implements Json {}

  /** A number, as its JSON text. */
  record Num(String text) implements Json {}

  record Bool(boolean value) implements Json {}

  record Null() implements Json {}

  record Arr(List<Json> items) implements Json {}

  /** An object; members keep their order and may repeat a key. */
  record Obj(List<Map.Entry<String, Json>> members) implements Json {

    /** This object with the member {@code key} (every occurrence) set to {@code value}. */
    Obj with(String key, Json value) {
      List<Map.Entry<String, Json>> out = new ArrayList<>();
      for (Map.Entry<String, Json> m : members) {
        out.add(m.getKey().equals(key) ? Map.entry(key, value) : m);
      }
      return new Obj(out);
    }

    /** This object with its member {@code key} written twice, the copy right after the original. */
    Obj duplicating(String key) {
      List<Map.Entry<String, Json>> out = new ArrayList<>();
      for (Map.Entry<String, Json> m : members) {
        out.add(m);
        if (m.getKey().equals(key)) {
          out.add(m);
        }
      }
      return new Obj(out);
    }

    Json get(String key) {
      for (Map.Entry<String, Json> m : members) {
        if (m.getKey().equals(key)) {
          return m.getValue();
        }
      }
      return null;
    }
  }

  /**
   * How strings are escaped, all legal per RFC 8259. A six-character escape is a backslash, {@code
   * u} and four hex digits.
   */
  enum Escapes {
    /** Only what must be: quote, backslash, control characters (as six-character escapes). */
    MINIMAL,
    /** The two-character escapes where they exist ({@code \n}, {@code \/}, ...). */
    SHORT,
    /** Everything outside printable ASCII as six-character escapes (UTF-16 units, so pairs). */
    ASCII,
    /** Every character as a six-character escape (upper-case hex). */
    ALL
  }

  /**
   * A way of writing JSON.
   *
   * @param escapes how strings are escaped
   * @param space the whitespace written around every structural character (JSON whitespace only)
   */
  record Style(Escapes escapes, String space) {}

  static String write(Json value, Style style) {
    StringBuilder sb = new StringBuilder();
    write(value, style, sb);
    return sb.toString();
  }

  private static void write(Json value, Style style, StringBuilder sb) {
    String ws = style.space();
    if (value instanceof Str s) {
      string(s.value(), style.escapes(), sb);
    } else if (value instanceof Num n) {
      sb.append(n.text());
    } else if (value instanceof Bool b) {
      sb.append(b.value());
    } else if (value instanceof Null) {
      sb.append("null");
    } else if (value instanceof Arr a) {
      sb.append('[').append(ws);
      for (int i = 0; i < a.items().size(); i++) {
        if (i > 0) {
          sb.append(ws).append(',').append(ws);
        }
        write(a.items().get(i), style, sb);
      }
      sb.append(ws).append(']');
    } else if (value instanceof Obj o) {
      sb.append('{').append(ws);
      for (int i = 0; i < o.members().size(); i++) {
        if (i > 0) {
          sb.append(ws).append(',').append(ws);
        }
        string(o.members().get(i).getKey(), style.escapes(), sb);
        sb.append(ws).append(':').append(ws);
        write(o.members().get(i).getValue(), style, sb);
      }
      sb.append(ws).append('}');
    }
  }

  private static void string(String s, Escapes escapes, StringBuilder sb) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (escapes == Escapes.ALL) {
        unicodeEscape(c, "0123456789ABCDEF", sb);
      } else if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (escapes != Escapes.MINIMAL && shortEscape(c) != 0) {
        sb.append('\\').append(shortEscape(c));
      } else if (c < 0x20 || (escapes == Escapes.ASCII && c > 0x7e) || unpaired(s, i)) {
        unicodeEscape(c, "0123456789abcdef", sb);
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }

  /** {@code c} as a six-character escape (not String.format: huge bodies escape millions). */
  private static void unicodeEscape(char c, String hex, StringBuilder sb) {
    sb.append("\\u")
        .append(hex.charAt(c >> 12))
        .append(hex.charAt((c >> 8) & 0xf))
        .append(hex.charAt((c >> 4) & 0xf))
        .append(hex.charAt(c & 0xf));
  }

  /** An unpaired surrogate has no UTF-8 form: only an escape writes it. */
  private static boolean unpaired(String s, int i) {
    char c = s.charAt(i);
    if (Character.isHighSurrogate(c)) {
      return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
    }
    return Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)));
  }

  private static char shortEscape(char c) {
    switch (c) {
      case '\b':
        return 'b';
      case '\f':
        return 'f';
      case '\n':
        return 'n';
      case '\r':
        return 'r';
      case '\t':
        return 't';
      case '/':
        return '/';
      default:
        return 0;
    }
  }
}
