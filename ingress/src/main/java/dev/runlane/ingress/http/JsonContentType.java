package dev.runlane.ingress.http;

import java.util.Locale;

/** Whether a {@code Content-Type} is JSON: {@code application/json} or {@code ...+json}. */
public final class JsonContentType {

  private JsonContentType() {}

  /**
   * @param contentType the header value, e.g. {@code application/json; charset=utf-8}; null when
   *     absent
   * @return true for {@code application/json} and {@code <type>/<subtype>+json}, any case, with or
   *     without parameters
   */
  public static boolean isJson(String contentType) {
    if (contentType == null) {
      return false;
    }
    int semicolon = contentType.indexOf(';');
    String mediaType =
        (semicolon < 0 ? contentType : contentType.substring(0, semicolon))
            .trim()
            .toLowerCase(Locale.ROOT);
    int slash = mediaType.indexOf('/');
    if (slash <= 0 || slash == mediaType.length() - 1 || mediaType.indexOf('/', slash + 1) >= 0) {
      return false;
    }
    String type = mediaType.substring(0, slash);
    String subtype = mediaType.substring(slash + 1);
    if (subtype.equals("json")) {
      return type.equals("application");
    }
    return subtype.endsWith("+json") && subtype.length() > "+json".length() && isToken(type);
  }

  private static boolean isToken(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!(Character.isLetterOrDigit(c) || "!#$&-^_.+".indexOf(c) >= 0)) {
        return false;
      }
    }
    return !s.isEmpty();
  }
}
