// The merge of several informers' live deltas into resourceVersion order (live_event_merge.hpp).

#include "app/kinformerd/live_event_merge.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace kinformer;
using kinformer::service::live_event_merge;

namespace {

delta change(const std::string& name, const std::string& rv) {
  auto obj = object::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                           R"(","namespace":"n","resourceVersion":")" + rv + R"("}})");
  REQUIRE(obj.ok());
  return delta{delta_type::updated, std::move(obj).value(), nullptr, false, false};
}

std::vector<std::string> versions(const std::vector<delta>& deltas) {
  std::vector<std::string> out;
  for (const auto& d : deltas)
    out.emplace_back(d.object->meta().resource_version);
  return out;
}

} // namespace

TEST_CASE("live_event_merge: one lane releases everything at once, in its order") {
  live_event_merge merge;
  merge.add_lane(1);
  merge.push(1, change("a", "7"));
  merge.push(1, change("b", "9"));
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"7", "9"});
  CHECK_FALSE(merge.holding());
}

TEST_CASE("live_event_merge: a delta waits until every other lane is past it") {
  live_event_merge merge;
  merge.add_lane(1);
  merge.add_lane(2);
  merge.note_progress(1, "10");
  merge.note_progress(2, "10");
  merge.push(1, change("a", "12"));
  merge.push(1, change("a", "14"));
  // Lane 2 may still deliver 11 or 13.
  CHECK(merge.take_ready().empty());
  CHECK(merge.holding());
  CHECK(merge.lanes_to_ask() == std::vector<live_event_merge::lane_key>{2});
  merge.push(2, change("b", "13"));
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"12", "13"});
  // 14 waits for lane 2 to pass it; its progress (a bookmark) does.
  merge.note_progress(2, "not-a-version");
  CHECK(merge.take_ready().empty());
  merge.note_progress(2, "20");
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"14"});
  CHECK_FALSE(merge.holding());
}

TEST_CASE("live_event_merge: a lane not heard from holds the others") {
  live_event_merge merge;
  merge.add_lane(1);
  merge.add_lane(2);
  merge.push(1, change("a", "5"));
  CHECK(merge.take_ready().empty());
  merge.note_progress(2, "5");
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"5"});
}

TEST_CASE("live_event_merge: three lanes interleave into one order") {
  live_event_merge merge;
  for (live_event_merge::lane_key lane : {1, 2, 3})
    merge.add_lane(lane);
  merge.push(1, change("a", "2"));
  merge.push(1, change("a", "5"));
  merge.push(2, change("b", "3"));
  merge.push(3, change("c", "1"));
  merge.push(3, change("c", "4"));
  // Lane 2 has reached 3 only: 4 and 5 wait.
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"1", "2", "3"});
  merge.push(2, change("b", "6"));
  // 5 waits for lane 3, which reached 4 only: it is the one to ask.
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"4"});
  CHECK(merge.lanes_to_ask() == std::vector<live_event_merge::lane_key>{3});
  merge.note_progress(3, "9");
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"5"});
  CHECK(merge.lanes_to_ask() == std::vector<live_event_merge::lane_key>{1, 3});
}

TEST_CASE("live_event_merge: a version that is not an integer goes out at once") {
  live_event_merge merge;
  merge.add_lane(1);
  merge.add_lane(2);
  merge.push(1, change("a", "x"));
  CHECK(versions(merge.take_ready()) == std::vector<std::string>{"x"});
}
