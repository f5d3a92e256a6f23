// The read API's continue snapshots: kept while a client can still page through them, and no
// longer, so that a paged list does not pin replaced object versions for the process's life.

#include "app/kinformerd/continue_snapshots.hpp"

#include <catch2/catch.hpp>

using namespace kinformer::service;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<const page_snapshot> snapshot_at(std::string resource_version) {
  auto s = std::make_shared<page_snapshot>();
  s->resource_version = std::move(resource_version);
  return s;
}

} // namespace

TEST_CASE("continue_snapshots: a snapshot is found until its last page is released") {
  continue_snapshots kept(4, 300s);
  const auto t0 = continue_snapshots::clock::time_point{};
  auto id = kept.keep(snapshot_at("7"), t0);
  CHECK(id != 0);
  auto found = kept.find(id, t0 + 1s);
  REQUIRE(found);
  CHECK(found->resource_version == "7");
  kept.release(id);
  CHECK_FALSE(kept.find(id, t0 + 1s));
  CHECK(kept.size() == 0);
  CHECK(found->resource_version == "7"); // a page being served keeps its own reference
}

TEST_CASE("continue_snapshots: a snapshot expires max_age after it was taken") {
  continue_snapshots kept(4, 60s);
  const auto t0 = continue_snapshots::clock::time_point{};
  auto old_id = kept.keep(snapshot_at("1"), t0);
  auto new_id = kept.keep(snapshot_at("2"), t0 + 30s);
  CHECK(kept.find(old_id, t0 + 60s));
  CHECK_FALSE(kept.find(old_id, t0 + 61s));
  CHECK(kept.find(new_id, t0 + 61s));
  CHECK(kept.size() == 1);
  // Keeping a new one evicts the expired ones too, even when nobody asks for them.
  kept.keep(snapshot_at("3"), t0 + 200s);
  CHECK(kept.size() == 1);
}

TEST_CASE("continue_snapshots: at most capacity are kept, the oldest evicted first") {
  continue_snapshots kept(2, 300s);
  const auto t0 = continue_snapshots::clock::time_point{};
  auto a = kept.keep(snapshot_at("1"), t0);
  auto b = kept.keep(snapshot_at("2"), t0);
  auto c = kept.keep(snapshot_at("3"), t0);
  CHECK(kept.size() == 2);
  CHECK_FALSE(kept.find(a, t0));
  CHECK(kept.find(b, t0));
  CHECK(kept.find(c, t0));
  CHECK(a != b);
  CHECK(b != c);
}
