package dev.runlane.bench.probe;

import com.yammer.metrics.core.Histogram;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.server.metrics.KafkaYammerMetrics;

/**
 * The embedded broker's requests by type, from its own request metrics: how many arrived and how
 * long its request handler threads spent on them ({@code LocalTimeMs}). One sample minus another
 * says which kinds of request took the broker's share of the cores in a soak window, which its
 * threads' CPU alone cannot.
 */
public final class BrokerRequests {
  private static final String GROUP = "kafka.network";
  private static final String TYPE = "RequestMetrics";

  private BrokerRequests() {}

  /** Requests so far and handler milliseconds so far, by request type. */
  public record Count(long requests, double handlerMillis) {}

  public static Map<String, Count> sample() {
    Map<String, Long> requests = new HashMap<>();
    Map<String, Double> handler = new HashMap<>();
    for (Map.Entry<MetricName, Metric> e :
        KafkaYammerMetrics.defaultRegistry().allMetrics().entrySet()) {
      MetricName name = e.getKey();
      if (!GROUP.equals(name.getGroup()) || !TYPE.equals(name.getType())) {
        continue;
      }
      String request = tag(name.getMBeanName(), "request");
      if (request == null) {
        continue;
      }
      if (name.getName().equals("RequestsPerSec") && e.getValue() instanceof Meter m) {
        requests.merge(request, m.count(), Long::sum); // one meter per request version
      } else if (name.getName().equals("LocalTimeMs") && e.getValue() instanceof Histogram h) {
        handler.merge(request, h.sum(), Double::sum);
      }
    }
    Map<String, Count> out = new HashMap<>();
    requests.forEach((k, v) -> out.put(k, new Count(v, handler.getOrDefault(k, 0.0))));
    return out;
  }

  /**
   * The {@code n} request types with the most handler time between two samples, as {@code
   * type=requests/handler ms}.
   */
  public static String top(Map<String, Count> before, Map<String, Count> after, int n) {
    List<Map.Entry<String, Count>> used = new ArrayList<>();
    after.forEach(
        (k, v) -> {
          Count b = before.getOrDefault(k, new Count(0, 0));
          used.add(
              Map.entry(
                  k,
                  new Count(v.requests() - b.requests(), v.handlerMillis() - b.handlerMillis())));
        });
    used.sort((x, y) -> Double.compare(y.getValue().handlerMillis(), x.getValue().handlerMillis()));
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < Math.min(n, used.size()); i++) {
      Count c = used.get(i).getValue();
      out.append(
          String.format(" %s=%d/%.0f", used.get(i).getKey(), c.requests(), c.handlerMillis()));
    }
    return out.toString();
  }

  /**
   * The value of {@code key} in a JMX name such as {@code kafka.network:type=X,request=Produce}.
   */
  public static String tag(String mbean, String key) {
    for (String part : mbean.substring(mbean.indexOf(':') + 1).split(",")) {
      if (part.startsWith(key + "=")) {
        return part.substring(key.length() + 1);
      }
    }
    return null;
  }
}
