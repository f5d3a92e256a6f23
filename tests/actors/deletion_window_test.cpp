// The informer's deletion window: what a resumed subscription is told was deleted, the count
// bound and how eviction moves the window's start, relist resets and non-integer versions.

#include "actors/deletion_window.hpp"
#include "tests/actors/test_objects.hpp"

#include <catch2/catch.hpp>

using namespace kinformer;
using kinformer::testing::make_pod;

namespace {

// "ns/name@rv" for each object, in order: easy to compare whole answers.
std::vector<std::string> describe(const std::vector<object_ptr>& objects) {
  std::vector<std::string> out;
  for (const auto& obj : objects)
    out.push_back(std::string(obj->key()) + "@" + std::string(obj->meta().resource_version));
  return out;
}

std::vector<std::string> deleted_since(const deletion_window& window, std::string_view rv) {
  auto found = window.deleted_since(rv);
  REQUIRE(found.ok());
  return describe(*found);
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

TEST_CASE("a deletion window answers the deletions after a resourceVersion, oldest first") {
  deletion_window window(8);
  CHECK_FALSE(window.covers_from());
  window.reset("10");
  CHECK(window.covers_from() == 10u);
  window.record(make_pod("default", "a", "12"));
  window.record(make_pod("default", "b", "15"));
  window.record(make_pod("kube-system", "c", "19"));
  CHECK(window.size() == 3);

  CHECK(deleted_since(window, "10") ==
        std::vector<std::string>{"default/a@12", "default/b@15", "kube-system/c@19"});
  CHECK(deleted_since(window, "12") ==
        std::vector<std::string>{"default/b@15", "kube-system/c@19"});
  CHECK(deleted_since(window, "14") ==
        std::vector<std::string>{"default/b@15", "kube-system/c@19"});
  CHECK(deleted_since(window, "19").empty());
  CHECK(deleted_since(window, "25").empty()); // newer than anything: nothing missed
}

TEST_CASE("a key deleted twice is reported once, by its first deletion after the version") {
  deletion_window window(8);
  window.reset("10");
  window.record(make_pod("default", "a", "12")); // the object a client at 10 holds
  window.record(make_pod("default", "a", "14")); // a re-created one, deleted again
  CHECK(deleted_since(window, "10") == std::vector<std::string>{"default/a@12"});
  CHECK(deleted_since(window, "12") == std::vector<std::string>{"default/a@14"});
}

TEST_CASE("a version older than the window's start is refused") {
  deletion_window window(8);
  window.reset("10");
  auto before = window.deleted_since("9");
  REQUIRE_FALSE(before.ok());
  CHECK(before.err().message.find("too old resource version: 9") != std::string::npos);
  CHECK(before.err().message.find("kept from 10") != std::string::npos);
  CHECK(window.deleted_since("10").ok());
}

TEST_CASE("the count bound evicts the oldest deletions and moves the window's start") {
  deletion_window window(3);
  CHECK(window.capacity() == 3);
  window.reset("100");
  for (int rv : {101, 102, 103})
    window.record(make_pod("default", "p" + std::to_string(rv), std::to_string(rv)));
  CHECK(window.size() == 3);
  CHECK(window.covers_from() == 100u);

  window.record(make_pod("default", "p104", "104"));
  window.record(make_pod("default", "p105", "105"));
  CHECK(window.size() == 3);
  // 101 and 102 were evicted: complete only after 102.
  CHECK(window.covers_from() == 102u);
  CHECK_FALSE(window.deleted_since("100").ok());
  CHECK_FALSE(window.deleted_since("101").ok());
  CHECK(deleted_since(window, "102") ==
        std::vector<std::string>{"default/p103@103", "default/p104@104", "default/p105@105"});
  CHECK(deleted_since(window, "104") == std::vector<std::string>{"default/p105@105"});
}

TEST_CASE("a capacity of zero still keeps one deletion") {
  deletion_window window(0);
  CHECK(window.capacity() == 1);
  window.reset("1");
  window.record(make_pod("default", "a", "2"));
  window.record(make_pod("default", "b", "3"));
  CHECK(window.covers_from() == 2u);
  CHECK(deleted_since(window, "2") == std::vector<std::string>{"default/b@3"});
}

TEST_CASE("a relist forgets the window and starts it at the list's version") {
  deletion_window window(8);
  window.reset("10");
  window.record(make_pod("default", "a", "12"));
  window.reset("30");
  CHECK(window.size() == 0);
  CHECK(window.covers_from() == 30u);
  CHECK_FALSE(window.deleted_since("12").ok()); // the relist's inferred deletes have no version
  CHECK(deleted_since(window, "30").empty());
  window.record(make_pod("default", "b", "31"));
  CHECK(deleted_since(window, "30") == std::vector<std::string>{"default/b@31"});
}

TEST_CASE("non-integer resourceVersions make the window refuse until the next relist") {
  SECTION("a non-integer list version") {
    deletion_window window(8);
    window.reset("abc");
    CHECK_FALSE(window.covers_from());
    window.record(make_pod("default", "a", "12")); // ignored: no start to measure from
    CHECK(window.size() == 0);
    auto refused = window.deleted_since("10");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.err().message.find("too old resource version") != std::string::npos);
  }
  SECTION("a non-integer deletion version") {
    deletion_window window(8);
    window.reset("10");
    window.record(make_pod("default", "a", "12"));
    window.record(make_pod("default", "b", "x7"));
    CHECK_FALSE(window.covers_from());
    CHECK(window.size() == 0);
    CHECK_FALSE(window.deleted_since("10").ok());
    window.reset("40");
    CHECK(deleted_since(window, "40").empty());
  }
  SECTION("a non-integer version asked for") {
    deletion_window window(8);
    window.reset("10");
    auto refused = window.deleted_since("ten");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.err().code == errc::invalid_argument);
    CHECK(refused.err().message.find("not an integer") != std::string::npos);
  }
}

TEST_CASE("deletions out of resourceVersion order make the window refuse") {
  deletion_window window(8);
  window.reset("10");
  window.record(make_pod("default", "a", "15"));
  window.record(make_pod("default", "b", "13")); // cannot be placed: completeness is lost
  CHECK_FALSE(window.covers_from());
  CHECK_FALSE(window.deleted_since("10").ok());
  window.record(make_pod("default", "c", "9")); // not after the list: refused as well
  CHECK(window.size() == 0);
}

TEST_CASE("null deletions are ignored") {
  deletion_window window(2);
  window.reset("10");
  window.record(nullptr);
  CHECK(window.size() == 0);
  CHECK(window.covers_from() == 10u);
}
