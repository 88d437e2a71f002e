package dev.runlane.common.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads typed settings from an environment map and collects every problem instead of failing at the
 * first one.
 *
 * <p>On a bad value each method records a problem naming the variable and what is wrong, then
 * returns the default so that parsing goes on; {@link #throwIfInvalid()} finally reports all
 * problems at once. Blank values count as unset. Values are trimmed. Echoed values are cut to 64
 * characters; secret values are never echoed, nor is the user-info part of a URI.
 *
 * <pre>{@code
 * EnvReader env = new EnvReader(System.getenv());
 * int port = env.port("INGRESS_PORT", 8080);
 * List<Secret> secrets = env.secrets("SUME_SIGNING_SECRETS");
 * env.throwIfInvalid();
 * }</pre>
 *
 * <p>Not thread-safe; use one instance per configuration load.
 */
public final class EnvReader {

  private static final int MAX_ECHO = 64;

  private final Map<String, String> env;
  private final List<String> problems = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();

  /**
   * @param env the environment, e.g. {@code System.getenv()} or a {@code Map.of(...)} in tests
   */
  public EnvReader(Map<String, String> env) {
    this.env = Map.copyOf(Objects.requireNonNull(env, "env"));
  }

  /** The names of the variables with a non-blank value that start with {@code prefix}, sorted. */
  public List<String> namesStartingWith(String prefix) {
    return env.keySet().stream().filter(n -> n.startsWith(prefix) && isSet(n)).sorted().toList();
  }

  /** Whether the variable has a non-blank value. */
  public boolean isSet(String name) {
    return raw(name) != null;
  }

  /** The trimmed value, or {@code def} when unset or blank. */
  public String string(String name, String def) {
    String v = raw(name);
    return v == null ? def : v;
  }

  /**
   * The trimmed value of a required variable; records "NAME is missing" and returns {@code ""} when
   * unset or blank (so that callers can go on and report further problems).
   */
  public String required(String name) {
    String v = raw(name);
    if (v == null) {
      problem(name + " is missing");
      return "";
    }
    return v;
  }

  /** An integer in {@code [min, max]}, or {@code def} when unset or invalid. */
  public int integer(String name, int def, int min, int max) {
    return (int) longValue(name, def, min, max);
  }

  /** A TCP port (1-65535), or {@code def} when unset or invalid. */
  public int port(String name, int def) {
    String v = raw(name);
    if (v == null) {
      return def;
    }
    try {
      int p = Integer.parseInt(v);
      if (p >= 1 && p <= 65535) {
        return p;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problem(name + "=" + quote(v) + " is not a port (1-65535)");
    return def;
  }

  /** A long in {@code [min, max]}, or {@code def} when unset or invalid. */
  public long longValue(String name, long def, long min, long max) {
    String v = raw(name);
    if (v == null) {
      return def;
    }
    long parsed;
    try {
      parsed = Long.parseLong(v);
    } catch (NumberFormatException e) {
      problem(name + "=" + quote(v) + " is not an integer");
      return def;
    }
    if (parsed < min || parsed > max) {
      problem(name + "=" + quote(v) + " is out of range (" + min + "-" + max + ")");
      return def;
    }
    return parsed;
  }

  /** A whole number of seconds in {@code [minSeconds, maxSeconds]}. */
  public Duration seconds(String name, long defSeconds, long minSeconds, long maxSeconds) {
    return Duration.ofSeconds(
        number(name, defSeconds, minSeconds, maxSeconds, "a number of seconds"));
  }

  /** A whole number of milliseconds in {@code [min, max]}. */
  public Duration millis(String name, long defMillis, long min, long max) {
    return Duration.ofMillis(number(name, defMillis, min, max, "a number of milliseconds"));
  }

  /**
   * A duration written with its unit, {@code 500ms}, {@code 2s} or {@code 1m} ({@code 0} needs
   * none), in {@code [min, max]}; {@code def} when unset or invalid.
   */
  public Duration duration(String name, Duration def, Duration min, Duration max) {
    String v = raw(name);
    if (v == null) {
      return def;
    }
    Matcher m = Pattern.compile("(\\d{1,9})(ms|s|m)?").matcher(v.trim());
    if (m.matches() && (m.group(2) != null || Long.parseLong(m.group(1)) == 0)) {
      long n = Long.parseLong(m.group(1));
      Duration d =
          m.group(2) == null
              ? Duration.ZERO
              : switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                default -> Duration.ofMinutes(n);
              };
      if (d.compareTo(min) >= 0 && d.compareTo(max) <= 0) {
        return d;
      }
    }
    problem(
        name
            + "="
            + quote(v)
            + " is not a duration between "
            + min.toMillis()
            + "ms and "
            + max.toMillis()
            + "ms (write it with its unit: 500ms, 2s, 1m; or 0)");
    return def;
  }

  private long number(String name, long def, long min, long max, String what) {
    String v = raw(name);
    if (v == null) {
      return def;
    }
    try {
      long parsed = Long.parseLong(v);
      if (parsed >= min && parsed <= max) {
        return parsed;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problem(name + "=" + quote(v) + " is not " + what + " (" + min + "-" + max + ")");
    return def;
  }

  /** {@code true|false|yes|no|1|0|on|off}, case-insensitive; {@code def} when unset or invalid. */
  public boolean bool(String name, boolean def) {
    String v = raw(name);
    if (v == null) {
      return def;
    }
    switch (v.toLowerCase(Locale.ROOT)) {
      case "true", "yes", "1", "on":
        return true;
      case "false", "no", "0", "off":
        return false;
      default:
        problem(name + "=" + quote(v) + " is not a boolean (true or false)");
        return def;
    }
  }

  /**
   * An enum constant by name, case-insensitive, {@code -} read as {@code _}; the problem message
   * lists the allowed values in lower case.
   */
  public <E extends Enum<E>> E enumValue(String name, Class<E> type, E def) {
    String v = raw(name);
    if (v == null) {
      return def;
    }
    String wanted = v.replace('-', '_');
    for (E constant : type.getEnumConstants()) {
      if (constant.name().equalsIgnoreCase(wanted)) {
        return constant;
      }
    }
    String allowed =
        Arrays.stream(type.getEnumConstants())
            .map(c -> c.name().toLowerCase(Locale.ROOT))
            .collect(Collectors.joining(", "));
    problem(name + "=" + quote(v) + " is not one of: " + allowed);
    return def;
  }

  /**
   * An absolute URI whose scheme is one of {@code allowedSchemes} (case-insensitive; empty set =
   * any scheme). {@code def} must be valid itself; it is returned when the value is unset or
   * invalid. A password in the URI is never echoed.
   *
   * @throws IllegalArgumentException if {@code def} is not a URI (a programming error)
   */
  public URI uri(String name, String def, Set<String> allowedSchemes) {
    URI fallback = def == null ? null : URI.create(def);
    String v = raw(name);
    if (v == null) {
      return fallback;
    }
    URI parsed;
    try {
      parsed = new URI(v);
    } catch (URISyntaxException e) {
      problem(name + "=" + quote(redactUserInfo(v)) + " is not a valid URI");
      return fallback;
    }
    String scheme = parsed.getScheme();
    if (scheme == null) {
      problem(name + "=" + quote(redactUserInfo(v)) + " has no scheme");
      return fallback;
    }
    if (!allowedSchemes.isEmpty()
        && allowedSchemes.stream().noneMatch(s -> s.equalsIgnoreCase(scheme))) {
      problem(
          name
              + "="
              + quote(redactUserInfo(v))
              + " has scheme '"
              + scheme
              + "', expected one of: "
              + String.join(", ", allowedSchemes.stream().sorted().toList()));
      return fallback;
    }
    if (parsed.isOpaque() || parsed.getHost() == null) {
      problem(name + "=" + quote(redactUserInfo(v)) + " has no host");
      return fallback;
    }
    return parsed;
  }

  /**
   * A required comma-separated list of secrets (newest first), each trimmed and non-empty. Problem
   * messages name the variable and the position, never a value. Returns an empty list on a problem.
   */
  public List<Secret> secrets(String name) {
    String v = raw(name);
    if (v == null) {
      problem(name + " is missing");
      return List.of();
    }
    String[] parts = v.split(",", -1);
    List<Secret> secrets = new ArrayList<>(parts.length);
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i].trim();
      if (part.isEmpty()) {
        problem(name + " has an empty entry at position " + (i + 1) + " of " + parts.length);
        return List.of();
      }
      secrets.add(Secret.of(part));
    }
    return List.copyOf(secrets);
  }

  /** A comma-separated list, trimmed, empty entries dropped; {@code def} when unset or empty. */
  public List<String> list(String name, List<String> def) {
    String v = raw(name);
    if (v == null) {
      return def;
    }
    List<String> out =
        Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    return out.isEmpty() ? def : out;
  }

  /** Records a problem (for cross-field checks). Name the variables; never include a secret. */
  public void problem(String message) {
    problems.add(Objects.requireNonNull(message, "message"));
  }

  /** Records a warning about a risky but valid combination. */
  public void warn(String message) {
    warnings.add(Objects.requireNonNull(message, "message"));
  }

  /** The warnings recorded so far, in order; the caller logs them after a successful load. */
  public List<String> warnings() {
    return List.copyOf(warnings);
  }

  /** The problems recorded so far, in order. */
  public List<String> problems() {
    return List.copyOf(problems);
  }

  /**
   * @throws ConfigException listing every problem in order, if there is any
   */
  public void throwIfInvalid() {
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
  }

  private String raw(String name) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return null;
    }
    return v.trim();
  }

  private static String quote(String value) {
    String shown =
        value.length() > MAX_ECHO
            ? value.substring(0, MAX_ECHO) + "...(" + value.length() + " chars)"
            : value;
    return "'" + shown + "'";
  }

  private static String redactUserInfo(String uri) {
    int schemeEnd = uri.indexOf("://");
    if (schemeEnd < 0) {
      return uri;
    }
    int authorityStart = schemeEnd + 3;
    int authorityEnd = authorityStart;
    while (authorityEnd < uri.length() && "/?#".indexOf(uri.charAt(authorityEnd)) < 0) {
      authorityEnd++;
    }
    int at = uri.lastIndexOf('@', authorityEnd - 1);
    if (at < authorityStart) {
      return uri;
    }
    return uri.substring(0, authorityStart) + "***@" + uri.substring(at + 1);
  }
}
