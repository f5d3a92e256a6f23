// The benchmarks' raw watch reader against the simulator on loopback: every event counted as it
// arrives, a read that finds nothing returns, and a dropped stream ends the count.

#include "app/kubesim/object_generator.hpp"
#include "app/kubesim/simulator.hpp"
#include "tests/bench/raw_http.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

using namespace kinformer;
using namespace kinformer::bench;

namespace {

// A watch of pods from the simulator's current resourceVersion, its head read.
raw_http_connection open_watch(sim::simulator& server) {
  auto connection = raw_http_connection::connect(server.port());
  REQUIRE(connection);
  REQUIRE(connection->send_get("/api/v1/pods?watch=1&resourceVersion=" +
                               std::to_string(server.store().current_resource_version())));
  auto head = connection->read_head();
  REQUIRE(head);
  REQUIRE(head->code == 200);
  REQUIRE(head->chunked);
  return std::move(*connection);
}

void create_pod(sim::simulator& server, int n) {
  std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p)" +
                     std::to_string(n) + R"(","namespace":"default"}})";
  REQUIRE(server.store().create(sim::pods_resource, "default", body));
}

} // namespace

TEST_CASE("a raw watch counts every event of the simulator's stream, one line each") {
  sim::simulator server;
  REQUIRE(server.start());
  auto watch = open_watch(server);

  for (int n = 0; n < 50; ++n)
    create_pod(server, n);
  auto counts = watch.count_lines(50);
  REQUIRE(counts);
  CHECK(counts->lines == 50);
  CHECK(counts->bytes > 50 * std::string(R"({"type":"ADDED"})").size());
  CHECK_FALSE(counts->ended);

  // Nothing more was written: a read waits, finds nothing, and leaves the counts as they were.
  auto idle = watch.read_lines(std::chrono::milliseconds(20));
  REQUIRE(idle);
  CHECK(idle->lines == 50);
  CHECK_FALSE(idle->ended);

  create_pod(server, 50);
  counts = watch.count_lines(51);
  REQUIRE(counts);
  CHECK(counts->lines == 51);
}

TEST_CASE("a raw watch whose connection the server drops ends its count") {
  sim::simulator server;
  REQUIRE(server.start());
  auto watch = open_watch(server);
  create_pod(server, 0);
  REQUIRE(watch.count_lines(1));

  server.drop_watches();
  // Bounded, so that a reader that never sees the end fails here instead of hanging.
  raw_http_connection::stream_counts counts;
  for (int read = 0; read < 100 && !counts.ended; ++read) {
    auto more = watch.read_lines(std::chrono::milliseconds(100));
    REQUIRE(more);
    counts = *more;
  }
  CHECK(counts.ended);
  CHECK(counts.lines == 1);
}
