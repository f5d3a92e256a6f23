#include "tests/bench/latency_recorder.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using kinformer::bench::latency_recorder;

TEST_CASE("the latency trace has a line for each write whose delta arrived, in write order") {
  latency_recorder recorder(100, 3);
  const auto start = latency_recorder::clock::now() - std::chrono::seconds(1);
  recorder.written(100, start);
  recorder.written(101, start + std::chrono::milliseconds(1));
  recorder.written(102, start + std::chrono::milliseconds(2)); // never arrives
  recorder.arrived("101");
  recorder.arrived("100");
  recorder.arrived("100"); // a second arrival of one version is not a delivery
  recorder.arrived("7");   // another phase's version: ignored

  const std::string path = "latency_trace_test." + std::to_string(::getpid()) + ".txt";
  REQUIRE(recorder.write_trace(path));
  std::ifstream file(path);
  std::vector<std::pair<long long, double>> lines;
  long long wrote = 0;
  double millis = 0;
  while (file >> wrote >> millis)
    lines.emplace_back(wrote, millis);
  std::remove(path.c_str());

  REQUIRE(lines.size() == 2);
  const auto ns = [](latency_recorder::clock::time_point at) {
    return static_cast<long long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
  };
  CHECK(lines[0].first == ns(start));
  CHECK(lines[1].first == ns(start + std::chrono::milliseconds(1)));
  // Both arrived now, about a second after they were written, the first a millisecond earlier.
  CHECK(lines[0].second >= 1000.0);
  CHECK(lines[0].second > lines[1].second);
  CHECK(recorder.percentiles().samples == 2);
  CHECK(recorder.percentiles().missing == 1);
}

TEST_CASE("a trace that cannot be written says so") {
  latency_recorder recorder(1, 1);
  CHECK_FALSE(recorder.write_trace("/nonexistent-directory/trace.txt"));
}
