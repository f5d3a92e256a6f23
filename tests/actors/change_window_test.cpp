// The informer's change window: what a resumed subscription is replayed, the count bound and how
// eviction moves the window's start, relist resets and non-integer versions.

#include "actors/change_window.hpp"
#include "tests/actors/test_objects.hpp"

#include <catch2/catch.hpp>

using namespace kinformer;
using kinformer::testing::make_pod;

namespace {

// "type ns/name@rv" for each change, in order: easy to compare whole answers.
std::vector<std::string> describe(const std::vector<delta>& changes) {
  static const char* names[] = {"added", "updated", "deleted", "sync"};
  std::vector<std::string> out;
  for (const auto& d : changes) {
    CHECK(d.initial_list); // a replay, flagged so the subscriber's synced marker follows it
    out.push_back(std::string(names[static_cast<int>(d.type)]) + " " +
                  std::string(d.object->key()) + "@" +
                  std::string(d.object->meta().resource_version));
  }
  return out;
}

std::vector<std::string> since(const change_window& window, std::string_view rv) {
  auto found = window.changes_since(rv);
  REQUIRE(found.ok());
  return describe(*found);
}

delta change(delta_type type, object_ptr obj, object_ptr old = nullptr) {
  delta d;
  d.type = type;
  d.object = std::move(obj);
  d.old_object = std::move(old);
  return d;
}

delta deleted(object_ptr obj) {
  return change(delta_type::deleted, obj, obj);
}

} // namespace

TEST_CASE("parse_revision accepts decimal integers only") {
  CHECK(parse_revision("0") == 0u);
  CHECK(parse_revision("18446744073709551615") == 18446744073709551615u);
  CHECK_FALSE(parse_revision(""));
  CHECK_FALSE(parse_revision("12a"));
  CHECK_FALSE(parse_revision("-3"));
  CHECK_FALSE(parse_revision(" 7"));
  CHECK_FALSE(parse_revision("18446744073709551616")); // overflow
}

TEST_CASE("a change window answers the changes after a resourceVersion, oldest first") {
  change_window window(8);
  CHECK_FALSE(window.covers_from());
  window.reset("10");
  CHECK(window.covers_from() == 10u);
  window.record(deleted(make_pod("default", "a", "12")));
  window.record(deleted(make_pod("default", "b", "15")));
  window.record(deleted(make_pod("kube-system", "c", "19")));
  CHECK(window.size() == 3);

  CHECK(since(window, "10") == std::vector<std::string>{"deleted default/a@12",
                                                        "deleted default/b@15",
                                                        "deleted kube-system/c@19"});
  CHECK(since(window, "12") ==
        std::vector<std::string>{"deleted default/b@15", "deleted kube-system/c@19"});
  CHECK(since(window, "14") ==
        std::vector<std::string>{"deleted default/b@15", "deleted kube-system/c@19"});
  CHECK(since(window, "19").empty());
  CHECK(since(window, "25").empty()); // newer than anything: nothing missed
}

TEST_CASE("every change is replayed in order, with its type and the state before it") {
  change_window window(8);
  window.reset("10");
  auto a11 = make_pod("default", "a", "11");
  auto a12 = make_pod("default", "a", "12");
  window.record(change(delta_type::added, a11));
  window.record(change(delta_type::updated, a12, a11));
  window.record(deleted(make_pod("default", "a", "14")));
  window.record(change(delta_type::added, make_pod("default", "a", "15"))); // re-created
  window.record(change(delta_type::sync, a12, a12));                        // not a change
  CHECK(window.size() == 4);
  CHECK(since(window, "10") ==
        std::vector<std::string>{"added default/a@11", "updated default/a@12",
                                 "deleted default/a@14", "added default/a@15"});
  auto replay = window.changes_since("11");
  REQUIRE(replay.ok());
  REQUIRE(replay->size() == 3);
  CHECK(replay->front().old_object == a11); // a reader can tell what the object was before
  CHECK(since(window, "14") == std::vector<std::string>{"added default/a@15"});
}

TEST_CASE("a version older than the window's start is refused") {
  change_window window(8);
  window.reset("10");
  auto before = window.changes_since("9");
  REQUIRE_FALSE(before.ok());
  CHECK(before.err().message.find("too old resource version: 9") != std::string::npos);
  CHECK(before.err().message.find("kept from 10") != std::string::npos);
  CHECK(window.changes_since("10").ok());
}

TEST_CASE("the count bound evicts the oldest changes and moves the window's start") {
  change_window window(3);
  CHECK(window.capacity() == 3);
  window.reset("100");
  for (int rv : {101, 102, 103})
    window.record(deleted(make_pod("default", "p" + std::to_string(rv), std::to_string(rv))));
  CHECK(window.size() == 3);
  CHECK(window.covers_from() == 100u);

  window.record(deleted(make_pod("default", "p104", "104")));
  window.record(deleted(make_pod("default", "p105", "105")));
  CHECK(window.size() == 3);
  // 101 and 102 were evicted: complete only after 102.
  CHECK(window.covers_from() == 102u);
  CHECK_FALSE(window.changes_since("100").ok());
  CHECK_FALSE(window.changes_since("101").ok());
  CHECK(since(window, "102") == std::vector<std::string>{"deleted default/p103@103",
                                                         "deleted default/p104@104",
                                                         "deleted default/p105@105"});
  CHECK(since(window, "104") == std::vector<std::string>{"deleted default/p105@105"});
}

TEST_CASE("a capacity of zero still keeps one change") {
  change_window window(0);
  CHECK(window.capacity() == 1);
  window.reset("1");
  window.record(deleted(make_pod("default", "a", "2")));
  window.record(deleted(make_pod("default", "b", "3")));
  CHECK(window.covers_from() == 2u);
  CHECK(since(window, "2") == std::vector<std::string>{"deleted default/b@3"});
}

TEST_CASE("a relist forgets the window and starts it at the list's version") {
  change_window window(8);
  window.reset("10");
  window.record(deleted(make_pod("default", "a", "12")));
  window.reset("30");
  CHECK(window.size() == 0);
  CHECK(window.covers_from() == 30u);
  CHECK_FALSE(window.changes_since("12").ok()); // the relist's inferred deletes have no version
  CHECK(since(window, "30").empty());
  window.record(deleted(make_pod("default", "b", "31")));
  CHECK(since(window, "30") == std::vector<std::string>{"deleted default/b@31"});
}

TEST_CASE("non-integer resourceVersions make the window refuse until the next relist") {
  SECTION("a non-integer list version") {
    change_window window(8);
    window.reset("abc");
    CHECK_FALSE(window.covers_from());
    window.record(deleted(make_pod("default", "a", "12"))); // ignored: no start to measure from
    CHECK(window.size() == 0);
    auto refused = window.changes_since("10");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.err().message.find("too old resource version") != std::string::npos);
  }
  SECTION("a non-integer change version") {
    change_window window(8);
    window.reset("10");
    window.record(deleted(make_pod("default", "a", "12")));
    window.record(deleted(make_pod("default", "b", "x7")));
    CHECK_FALSE(window.covers_from());
    CHECK(window.size() == 0);
    CHECK_FALSE(window.changes_since("10").ok());
    window.reset("40");
    CHECK(since(window, "40").empty());
  }
  SECTION("a non-integer version asked for") {
    change_window window(8);
    window.reset("10");
    auto refused = window.changes_since("ten");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.err().code == errc::invalid_argument);
    CHECK(refused.err().message.find("not an integer") != std::string::npos);
  }
}

TEST_CASE("changes out of resourceVersion order make the window refuse") {
  change_window window(8);
  window.reset("10");
  window.record(deleted(make_pod("default", "a", "15")));
  window.record(deleted(make_pod("default", "b", "13"))); // cannot be placed: completeness is lost
  CHECK_FALSE(window.covers_from());
  CHECK_FALSE(window.changes_since("10").ok());
  window.record(deleted(make_pod("default", "c", "9"))); // not after the list: refused as well
  CHECK(window.size() == 0);
}

TEST_CASE("deltas without an object are ignored") {
  change_window window(2);
  window.reset("10");
  window.record(delta{});
  CHECK(window.size() == 0);
  CHECK(window.covers_from() == 10u);
}
