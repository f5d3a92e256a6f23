#include "tests/bench/host_pace_probe.hpp"

#include <catch2/catch.hpp>

using kinformer::bench::host_pace_options;
using kinformer::bench::measure_host_pace;

namespace {

host_pace_options small_probe(unsigned relay_threads) {
  host_pace_options options;
  options.ticks = 500;
  options.ticks_per_second =
      50'000; // faster than a relay wakes: ticks queue up and arrive together
  options.working_set_bytes = std::size_t{1} << 20;
  options.pages_per_tick = 4;
  options.relay_threads = relay_threads;
  return options;
}

} // namespace

TEST_CASE("every tick reaches the end of the relay, whatever queued up on the way") {
  for (unsigned threads : {1u, 3u}) {
    INFO(threads << " relay threads");
    auto pace = measure_host_pace(small_probe(threads));
    REQUIRE(pace);
    CHECK(pace->tick.samples == 500);
    CHECK(pace->relayed.samples == 500);
    CHECK(pace->relayed.missing == 0);
    // Each tick reaches the relay's end after the ticker noted it done, so every quantile of the
    // relayed lateness is at least the tick's (arrivals matched to the wrong ticks could not be).
    CHECK(pace->relayed.p50_ms >= pace->tick.p50_ms);
    CHECK(pace->relayed.p99_ms >= pace->tick.p99_ms);
    CHECK(pace->relayed.max_ms >= pace->tick.max_ms);
  }
}

TEST_CASE("without a relay only the ticks are measured") {
  auto pace = measure_host_pace(small_probe(0));
  REQUIRE(pace);
  CHECK(pace->tick.samples == 500);
  CHECK(pace->relayed.samples == 0);
}
