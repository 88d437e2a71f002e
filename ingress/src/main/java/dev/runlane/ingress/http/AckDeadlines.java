package dev.runlane.ingress.http;

import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The ack deadlines of one event loop's requests, checked by one periodic timer while any are
 * waiting. A Vert.x timer set and cancelled per request cost about 2 us of event-loop CPU, a fifth
 * of the ingress's own work per request; here a request costs a link and an unlink (D11).
 *
 * <p>Every sweep looks at every waiting request: at a live rate that is the few hundred whose ack
 * is in flight. Deadlines are not in the order requests are added (a slow upload is added late with
 * an early deadline), so a sweep cannot stop at the first one that is still running.
 *
 * <p>Confined to one event loop: create it, add to it and settle its entries on that loop only.
 */
final class AckDeadlines {

  /** How often waiting requests are checked: a 503 comes at most this late. */
  static final long TICK_MILLIS = 10;

  /** One request waiting for its ack. */
  static final class Waiting {
    private final long deadlineNanos;
    private final Runnable onExpiry;
    private Waiting prev;
    private Waiting next;
    private boolean linked = true;

    private Waiting(long deadlineNanos, Runnable onExpiry) {
      this.deadlineNanos = deadlineNanos;
      this.onExpiry = onExpiry;
    }
  }

  private final Vertx vertx;
  private final LongSupplier nanoTime;
  private Waiting head;
  private Waiting tail;
  private long timer = -1;

  AckDeadlines(Vertx vertx, LongSupplier nanoTime) {
    this.vertx = vertx;
    this.nanoTime = nanoTime;
  }

  /** Runs {@code onExpiry} on this loop once {@code deadlineNanos} passed, unless settled first. */
  Waiting add(long deadlineNanos, Runnable onExpiry) {
    Waiting w = new Waiting(deadlineNanos, onExpiry);
    if (tail == null) {
      head = w;
    } else {
      tail.next = w;
      w.prev = tail;
    }
    tail = w;
    if (timer < 0) {
      timer = vertx.setPeriodic(TICK_MILLIS, id -> sweep());
    }
    return w;
  }

  /** Takes {@code w} off the watch; does nothing if it already expired or was settled. */
  void settle(Waiting w) {
    if (w.linked) {
      unlink(w);
    }
  }

  /** Expires every request whose deadline passed; stops the timer once none is waiting. */
  void sweep() {
    long now = nanoTime.getAsLong();
    List<Waiting> expired = null; // taken off first: an expiry may settle another request
    for (Waiting w = head; w != null; ) {
      Waiting next = w.next;
      if (now - w.deadlineNanos >= 0) {
        unlink(w);
        if (expired == null) {
          expired = new ArrayList<>();
        }
        expired.add(w);
      }
      w = next;
    }
    if (head == null && timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
    if (expired != null) {
      expired.forEach(w -> w.onExpiry.run());
    }
  }

  /** Requests still waiting (for tests). */
  int waiting() {
    int n = 0;
    for (Waiting w = head; w != null; w = w.next) {
      n++;
    }
    return n;
  }

  boolean ticking() {
    return timer >= 0;
  }

  private void unlink(Waiting w) {
    if (w.prev == null) {
      head = w.next;
    } else {
      w.prev.next = w.next;
    }
    if (w.next == null) {
      tail = w.prev;
    } else {
      w.next.prev = w.prev;
    }
    w.prev = null;
    w.next = null;
    w.linked = false;
  }
}
