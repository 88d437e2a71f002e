package dev.runlane.local;

import dev.runlane.local.simulator.Ledger;
import dev.runlane.local.verify.ConsumerLag;
import dev.runlane.local.verify.ProcessorMetricsScrape;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * The demo's live progress line: on a terminal it is rewritten in place ({@code \r}); otherwise
 * (CI, a pipe) a plain line is printed every few seconds.
 */
final class Progress implements AutoCloseable {

  private final Ledger ledger;
  private final Stack stack;
  private final PrintStream out;
  private final boolean terminal;
  private final HttpClient http = HttpClient.newHttpClient();
  private final Admin admin;
  private final long started = System.nanoTime();
  private int lastWidth;

  Progress(Ledger ledger, Stack stack, PrintStream out, boolean terminal) {
    this.ledger = ledger;
    this.stack = stack;
    this.out = out;
    this.terminal = terminal;
    this.admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                stack.bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                5000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                5000));
  }

  /** How long to wait between two updates. */
  Duration interval() {
    return terminal ? Duration.ofMillis(500) : Duration.ofSeconds(5);
  }

  /** Prints the current line (in place on a terminal). */
  void update() {
    String line = line();
    if (terminal) {
      int pad = Math.max(0, lastWidth - line.length());
      out.print("\r" + line + " ".repeat(pad));
      lastWidth = line.length();
    } else {
      out.println(line);
    }
    out.flush();
  }

  /** Ends the in-place line so that what follows starts on a new line. */
  void finish() {
    update();
    if (terminal) {
      out.println();
    }
  }

  String line() {
    ProcessorMetricsScrape m =
        ProcessorMetricsScrape.scrape(http, stack.processorUri().resolve("/metrics"));
    long lag = ConsumerLag.of(admin, stack.applicationId(), stack.topics().webhooks());
    long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
    return String.format(
        "%3ds  sent %d  acked %d  retried %d  applied %d  dup redis %d store %d  stale %d  lag %s",
        seconds,
        ledger.events(),
        ledger.ackedEvents(),
        ledger.retries(),
        m.count("applied"),
        m.count("duplicate", "redis"),
        m.count("duplicate", "store"),
        m.count("stale"),
        lag < 0 ? "?" : Long.toString(lag));
  }

  @Override
  public void close() {
    admin.close();
  }

  /** Whether this JVM writes to a terminal. */
  static boolean isTerminal() {
    return System.console() != null;
  }
}
