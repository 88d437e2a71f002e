package dev.runlane.processor.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runlane.common.generation.Replay;
import dev.runlane.processor.ProcessorConfig.RedisFailureMode;
import dev.runlane.processor.dedup.Claim;
import dev.runlane.processor.dedup.ClaimAnswer;
import dev.runlane.processor.dedup.ClaimRequest;
import dev.runlane.processor.dedup.Dedup;
import dev.runlane.processor.dedup.DedupUnavailableException;
import dev.runlane.processor.dedup.EventKey;
import dev.runlane.processor.dedup.Marker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * One task's claims and done markers against a Redis that answers from a map (design.md §6.3): when
 * markers ride on claims, when they go alone, and what a batch gets when Redis cannot answer.
 */
class RedisClaimsTest {
  private static final EventKey A = new EventKey("a", "run-1");
  private static final EventKey B = new EventKey("b", "run-2");

  /** A Redis in a map: every id is new, or it does not answer. */
  private static final class FakeDedup implements Dedup {
    boolean answers = true;
    final List<ClaimRequest> claimed = new ArrayList<>();
    final List<List<String>> markedDone = new ArrayList<>();
    final List<Collection<EventKey>> released = new ArrayList<>();

    @Override
    public ClaimAnswer claim(List<ClaimRequest> requests) {
      if (!answers) {
        throw new DedupUnavailableException("not answering", null);
      }
      claimed.addAll(requests);
      List<Map<String, Claim>> answers = new ArrayList<>();
      for (ClaimRequest request : requests) {
        Map<String, Claim> claims = new HashMap<>();
        request.events().forEach(e -> claims.put(e.requestId(), Claim.NEW));
        answers.add(claims);
      }
      return new ClaimAnswer(answers, Set.of());
    }

    @Override
    public Set<String> markDone(String owner, Collection<Marker> markers) {
      markedDone.add(markers.stream().map(Marker::requestId).toList());
      return Set.of();
    }

    @Override
    public void release(String owner, Collection<EventKey> events) {
      released.add(List.copyOf(events));
    }

    @Override
    public void close() {}
  }

  private final FakeDedup redis = new FakeDedup();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private final ThreadRoundTrip roundTrip = new ThreadRoundTrip(redis);

  private RedisClaims claims(RedisFailureMode mode, RedisBudget budget) {
    return claims("0_0", mode, budget);
  }

  private RedisClaims claims(String owner, RedisFailureMode mode, RedisBudget budget) {
    RedisClaims claims =
        new RedisClaims(
            TestTopology.settings(mode, 4096),
            redis,
            budget,
            new ProcessorMetrics(registry),
            FaultHook.NONE);
    claims.join(owner, roundTrip, () -> 0L);
    return claims;
  }

  private RedisClaims claims() {
    return claims(RedisFailureMode.DEGRADE, RedisBudget.unbounded());
  }

  @Test
  void aBatchsMarkersRideOnTheNextBatchsClaims() {
    RedisClaims claims = claims();
    claims.drainStarted();
    claims.claim(List.of(A));
    claims.owe(List.of(new Marker(A, false)));
    claims.drainEnded();
    claims.drainStarted();
    ThreadRoundTrip.Answer answer = claims.claim(List.of(B));
    claims.drainEnded();

    assertThat(redis.claimed.get(1).doneFirst()).containsExactly(new Marker(A, false));
    assertThat(answer.markersWritten()).containsExactly("a");
    assertThat(redis.markedDone).isEmpty();
  }

  @Test
  void markersGoAfterAWholeDrainWithNothingToClaim() {
    RedisClaims claims = claims();
    claims.drainStarted();
    claims.owe(List.of(new Marker(A, false)));
    claims.drainEnded();
    assertThat(redis.claimed).as("owed in this drain: they may ride on its next").isEmpty();

    claims.drainStarted();
    claims.drainEnded();

    assertThat(redis.claimed).hasSize(1);
    assertThat(redis.claimed.get(0).doneFirst()).containsExactly(new Marker(A, false));
    assertThat(redis.claimed.get(0).events()).isEmpty();
    assertThat(redis.markedDone).isEmpty();
  }

  /**
   * A task that drains ahead of the pass's first claimer, owing markers and with nothing to claim,
   * makes the thread's round trip: the peer after it decides on what it brought, and the pass makes
   * one trip, not one per such task (D104).
   */
  @Test
  void markersOwedWithNothingToClaimRideWithWhatAPeerParkedInOneRoundTrip() {
    RedisClaims mine = claims();
    RedisClaims peer = claims("0_1", RedisFailureMode.DEGRADE, RedisBudget.unbounded());
    EventKey c = new EventKey("c", "run-3");
    mine.drainStarted();
    mine.owe(List.of(new Marker(A, false)));
    mine.drainEnded();
    peer.parked(c, Replay.Range.LIVE);

    mine.drainStarted();
    mine.drainEnded();
    peer.drainStarted();
    ThreadRoundTrip.Answer answer = peer.claim(List.of(c));
    peer.drainEnded();

    assertThat(redis.markedDone).as("no trip for the markers alone").isEmpty();
    assertThat(redis.claimed).hasSize(2);
    assertThat(redis.claimed.get(0).doneFirst()).containsExactly(new Marker(A, false));
    assertThat(redis.claimed.get(1).owner()).isEqualTo("0_1");
    assertThat(redis.claimed.get(1).events()).containsExactly(c);
    assertThat(answer.claims()).isEqualTo(Map.of("c", Claim.NEW));
  }

  @Test
  void degradeModeDecidesEveryIdUnavailableWhenRedisDoesNotAnswer() {
    RedisClaims claims = claims();
    redis.answers = false;

    ThreadRoundTrip.Answer answer = claims.claim(List.of(A, B));

    assertThat(answer.claims()).isEqualTo(Map.of("a", Claim.UNAVAILABLE, "b", Claim.UNAVAILABLE));
    assertThat(answer.markersWritten()).isEmpty();
  }

  @Test
  void blockModeWaitsForTheNextTransactionOnceItsRedisTimeIsSpent() {
    RedisClaims claims = claims(RedisFailureMode.BLOCK, RedisBudget.perTransaction(Duration.ZERO));

    assertThat(claims.claim(List.of(A))).isNull();
    assertThat(redis.claimed).isEmpty();
    assertThat(registry.get(ProcessorMetrics.REDIS_BUDGET_SPENT).counter().count()).isEqualTo(1);
  }

  @Test
  void aPeersRoundTripClaimsWhatThisTaskParkedExceptWhatTheRunStoreDecidesAlone() {
    RedisClaims mine = claims();
    RedisClaims peer = claims("0_1", RedisFailureMode.DEGRADE, RedisBudget.unbounded());
    mine.parked(A, Replay.Range.LIVE);
    mine.parked(B, Replay.Range.SILENT);

    peer.claim(List.of(new EventKey("c", "run-3")));

    assertThat(redis.claimed).hasSize(2);
    assertThat(redis.claimed.get(1).owner()).isEqualTo("0_0");
    assertThat(redis.claimed.get(1).events()).containsExactly(A);
  }

  @Test
  void givesBackTheClaimsItWasGiven() {
    RedisClaims claims = claims();
    claims.giveBack(List.of(A));
    claims.giveBack(List.of());

    assertThat(redis.released).containsExactly(List.of(A));
  }
}
