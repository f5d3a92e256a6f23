#include "actors/store.hpp"
#include "actors/subscription_queue.hpp"
#include "tests/actors/test_objects.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>

using namespace kinformer;
using kinformer::testing::make_pod;

namespace {

delta make(delta_type type, object_ptr obj, object_ptr old = nullptr) {
  return delta{type, std::move(obj), std::move(old), false, false};
}

std::vector<delta> drain(subscription_queue& q) {
  q.grant(q.depth());
  std::vector<delta> out;
  while (auto d = q.pop())
    out.push_back(std::move(*d));
  return out;
}

void check_balance(const subscription_queue& q) {
  auto s = q.stats();
  CHECK(s.pushed == s.delivered + s.coalesced + s.depth);
}

// Fills the queue to its bound with deltas of unrelated keys.
void fill(subscription_queue& q) {
  for (std::size_t i = q.depth(); i < q.bound(); ++i)
    q.push(make(delta_type::added, make_pod("filler", "f" + std::to_string(i))));
}

} // namespace

TEST_CASE("deltas come out in order, one per credit") {
  subscription_queue q(100);
  auto a = make_pod("ns", "a"), b = make_pod("ns", "b"), c = make_pod("ns", "c");
  q.push(make(delta_type::added, a));
  q.push(make(delta_type::added, b));
  q.push(make(delta_type::updated, a, a));
  q.push(make(delta_type::added, c));
  CHECK(q.depth() == 4);
  CHECK_FALSE(q.ready());
  CHECK_FALSE(q.pop().has_value()); // no credit yet

  q.grant(2);
  CHECK(q.ready());
  auto first = q.pop();
  auto second = q.pop();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->object == a);
  CHECK(second->object == b);
  CHECK_FALSE(q.pop().has_value()); // credit spent
  CHECK(q.credit() == 0);

  q.grant(10);
  auto third = q.pop();
  REQUIRE(third);
  CHECK(third->type == delta_type::updated);
  CHECK(q.pop()->object == c);
  CHECK_FALSE(q.pop().has_value()); // empty
  CHECK(q.credit() == 8);           // unspent credit carries over
  auto s = q.stats();
  CHECK(s.pushed == 4);
  CHECK(s.delivered == 4);
  CHECK(s.coalesced == 0);
  CHECK(s.high_water == 4);
  check_balance(q);
}

TEST_CASE("below the bound every delta is delivered as pushed") {
  subscription_queue q(10);
  auto a1 = make_pod("ns", "a", "1"), a2 = make_pod("ns", "a", "2"), a3 = make_pod("ns", "a", "3");
  q.push(make(delta_type::added, a1));
  q.push(make(delta_type::updated, a2, a1));
  q.push(make(delta_type::updated, a3, a2));
  auto out = drain(q);
  REQUIRE(out.size() == 3);
  CHECK(out[2].object == a3);
  CHECK(q.stats().coalesced == 0);
}

TEST_CASE("the ring grows past its first size and keeps the order") {
  subscription_queue q(1000);
  std::vector<object_ptr> pods;
  for (int i = 0; i < 100; ++i) {
    pods.push_back(make_pod("ns", "p" + std::to_string(i)));
    q.push(make(delta_type::added, pods.back()));
    if (i % 3 == 0) { // interleave pops so the ring wraps around
      q.grant(1);
      REQUIRE(q.pop()->object == pods[i / 3]);
    }
  }
  auto out = drain(q);
  REQUIRE(out.size() == 100 - 34);
  for (std::size_t i = 0; i < out.size(); ++i)
    CHECK(out[i].object == pods[34 + i]);
}

TEST_CASE("at the bound, deltas fold into the key's pending delta") {
  auto v1 = make_pod("ns", "k", "1"), v2 = make_pod("ns", "k", "2"), v3 = make_pod("ns", "k", "3");
  subscription_queue q(3);

  SECTION("added + updated -> added(latest)") {
    q.push(delta{delta_type::added, v1, nullptr, true, false});
    fill(q);
    q.push(make(delta_type::updated, v2, v1));
    CHECK(q.depth() == 3);
    auto out = drain(q);
    CHECK(out[0].type == delta_type::added);
    CHECK(out[0].object == v2);
    CHECK(out[0].old_object == nullptr);
    CHECK(out[0].initial_list); // still the add from the initial list
  }
  SECTION("updated + updated -> updated(old of the first, object of the last)") {
    q.push(make(delta_type::updated, v2, v1));
    fill(q);
    q.push(make(delta_type::updated, v3, v2));
    auto out = drain(q);
    REQUIRE(out.size() == 3);
    CHECK(out[0].type == delta_type::updated);
    CHECK(out[0].old_object == v1);
    CHECK(out[0].object == v3);
  }
  SECTION("updated + deleted -> deleted(final state, old of the first)") {
    q.push(make(delta_type::updated, v2, v1));
    fill(q);
    q.push(delta{delta_type::deleted, v3, v2, false, true});
    auto out = drain(q);
    CHECK(out[0].type == delta_type::deleted);
    CHECK(out[0].object == v3);
    CHECK(out[0].old_object == v1);
    CHECK(out[0].final_state_unknown);
  }
  SECTION("sync + updated -> updated; sync + sync -> sync") {
    q.push(make(delta_type::sync, v1, v1));
    fill(q);
    q.push(make(delta_type::sync, v1, v1));
    CHECK(q.depth() == 3);
    q.push(make(delta_type::updated, v2, v1));
    auto out = drain(q);
    REQUIRE(out.size() == 3);
    CHECK(out[0].type == delta_type::updated);
    CHECK(out[0].old_object == v1);
    CHECK(out[0].object == v2);
  }
  SECTION("sync + deleted -> deleted") {
    q.push(make(delta_type::sync, v1, v1));
    fill(q);
    q.push(make(delta_type::deleted, v2, v1));
    auto out = drain(q);
    CHECK(out[0].type == delta_type::deleted);
    CHECK(out[0].object == v2);
  }
  SECTION("added + deleted is kept apart: a creation is never hidden") {
    q.push(make(delta_type::added, v1));
    fill(q);
    q.push(make(delta_type::updated, v2, v1)); // folds into the add
    q.push(make(delta_type::deleted, v3, v2)); // appended after it
    CHECK(q.depth() == 4);
    CHECK(q.stats().over_bound == 1);
    auto out = drain(q);
    REQUIRE(out.size() == 4);
    CHECK(out[0].type == delta_type::added);
    CHECK(out[0].object == v2);
    CHECK(out[3].type == delta_type::deleted);
    CHECK(out[3].object == v3);
    CHECK(q.stats().coalesced == 1);
  }
  SECTION("deleted + added is kept apart: a recreated object is a new identity") {
    q.push(make(delta_type::deleted, v1, v1));
    fill(q);
    q.push(make(delta_type::added, v2));
    CHECK(q.depth() == 4);
    CHECK(q.stats().over_bound == 1);
    // Once pending, the re-add absorbs the updates that follow it; its delete is appended.
    q.push(make(delta_type::updated, v3, v2));
    CHECK(q.depth() == 4);
    q.push(make(delta_type::deleted, v3, v3));
    CHECK(q.depth() == 5);
    auto out = drain(q);
    REQUIRE(out.size() == 5);
    CHECK(out[0].type == delta_type::deleted);
    CHECK(out[0].object == v1);
    CHECK(out[3].type == delta_type::added);
    CHECK(out[3].object == v3);
    CHECK(out[4].type == delta_type::deleted);
    CHECK(q.stats().coalesced == 1);
  }
  SECTION("deleted + deleted -> the later delete") {
    q.push(make(delta_type::deleted, v1, v1));
    fill(q);
    q.push(delta{delta_type::deleted, v2, v2, false, true});
    auto out = drain(q);
    REQUIRE(out.size() == 3);
    CHECK(out[0].object == v2);
    CHECK(out[0].final_state_unknown);
  }
  check_balance(q);
}

TEST_CASE("more distinct keys than the bound: nothing is lost, the excess is counted") {
  subscription_queue q(4);
  std::vector<object_ptr> pods;
  for (int i = 0; i < 10; ++i) {
    pods.push_back(make_pod("ns", "p" + std::to_string(i)));
    q.push(make(delta_type::added, pods.back()));
  }
  auto s = q.stats();
  CHECK(s.depth == 10);
  CHECK(s.over_bound == 6);
  CHECK(s.high_water == 10);
  // Updates of those keys now fold in: depth stays at one delta per key.
  for (int i = 0; i < 10; ++i)
    q.push(make(delta_type::updated, make_pod("ns", "p" + std::to_string(i), "2"), pods[i]));
  CHECK(q.depth() == 10);
  CHECK(q.stats().coalesced == 10);
  auto out = drain(q);
  REQUIRE(out.size() == 10);
  for (int i = 0; i < 10; ++i) {
    CHECK(out[i].type == delta_type::added);
    CHECK(out[i].object->key() == pods[i]->key());
    CHECK(out[i].object->meta().resource_version == "2");
  }
  check_balance(q);
}

TEST_CASE("coalescing stops after the queue drains and restarts at the bound") {
  subscription_queue q(2);
  auto a1 = make_pod("ns", "a", "1"), a2 = make_pod("ns", "a", "2"), a3 = make_pod("ns", "a", "3");
  q.push(make(delta_type::added, a1));
  q.push(make(delta_type::updated, a2, a1));
  q.push(make(delta_type::updated, a3, a2)); // folds into the pending update
  CHECK(q.depth() == 2);
  auto out = drain(q);
  REQUIRE(out.size() == 2);
  CHECK(out[1].object == a3);
  CHECK(out[1].old_object == a1);
  // Empty again: below the bound nothing folds.
  q.push(make(delta_type::updated, a2, a3));
  CHECK(q.depth() == 1);
  CHECK(q.stats().coalesced == 1);
  check_balance(q);
}

TEST_CASE("a slow handler converges to the store's state, each step valid for what it saw") {
  // Drive a real store with random events and relists; feed its deltas through a small queue
  // popped at random; replay the deliveries into a model of what the handler knows.
  store s;
  subscription_queue q(8);
  std::mt19937 rng(42);
  std::map<std::string, object_ptr> handler_view;
  int version = 1;

  auto deliver = [&](const delta& d) {
    std::string key(d.object->key());
    auto it = handler_view.find(key);
    switch (d.type) {
    case delta_type::added:
      REQUIRE(it == handler_view.end());
      handler_view[key] = d.object;
      break;
    case delta_type::updated:
    case delta_type::sync:
      REQUIRE(it != handler_view.end());
      REQUIRE(d.old_object == it->second); // the old state is the one the handler holds
      it->second = d.object;
      break;
    case delta_type::deleted:
      REQUIRE(it != handler_view.end());
      handler_view.erase(it);
      break;
    }
  };
  auto push_all = [&](std::vector<delta> deltas) {
    for (auto& d : deltas)
      q.push(std::move(d));
  };

  for (int step = 0; step < 4000; ++step) {
    std::string name = "p" + std::to_string(rng() % 24);
    auto roll = rng() % 100;
    if (roll < 2) {
      // A relist of a random subset of the current objects, some of them changed.
      std::vector<object_ptr> items;
      for (const auto& obj : s.list()) {
        if (rng() % 4 == 0)
          continue;
        items.push_back(rng() % 2
                            ? obj
                            : make_pod(std::string(obj->meta().namespace_),
                                       std::string(obj->meta().name), std::to_string(++version)));
      }
      push_all(s.replace(items, std::to_string(version)));
    } else if (roll < 30) {
      if (s.get("ns/" + name)) {
        auto d = s.apply(event_type::deleted, make_pod("ns", name, std::to_string(++version)));
        REQUIRE(d.ok());
        q.push(std::move(d).value());
      }
    } else {
      auto d = s.apply(event_type::modified, make_pod("ns", name, std::to_string(++version)));
      REQUIRE(d.ok());
      q.push(std::move(d).value());
    }
    if (rng() % 3 == 0) {
      q.grant(rng() % 4);
      while (auto d = q.pop())
        deliver(*d);
    }
  }
  for (const auto& d : drain(q))
    deliver(d);

  auto stored = s.list();
  REQUIRE(handler_view.size() == stored.size());
  for (const auto& obj : stored)
    CHECK(handler_view.at(std::string(obj->key())) == obj);
  auto stats = q.stats();
  CHECK(stats.coalesced > 0);
  CHECK(stats.high_water >= 8);
  check_balance(q);
}

TEST_CASE("the queue counts the initial-list deltas still to deliver") {
  subscription_queue q(2);
  auto a = make_pod("ns", "a"), b = make_pod("ns", "b"), c = make_pod("ns", "c");
  q.push(delta{delta_type::added, a, nullptr, true, false});
  q.push(delta{delta_type::added, b, nullptr, true, false});
  q.push(make(delta_type::added, c));
  CHECK(q.initial_pending() == 2);
  // At the bound: an update folds into the initial add, which stays initial...
  q.push(make(delta_type::updated, make_pod("ns", "a", "2"), a));
  CHECK(q.initial_pending() == 2);
  // ...and a delete is queued after it: the initial add still has to be delivered.
  q.push(make(delta_type::deleted, make_pod("ns", "b", "2"), b));
  CHECK(q.initial_pending() == 2);
  q.grant(2);
  auto first = q.pop();
  REQUIRE(first);
  CHECK(first->initial_list);
  CHECK(first->object->meta().resource_version == "2");
  CHECK(q.initial_pending() == 1);
  auto second = q.pop();
  REQUIRE(second);
  CHECK(second->object == b);
  CHECK(q.initial_pending() == 0);
  CHECK(q.depth() == 2);
  check_balance(q);
}

TEST_CASE("a blocked handler counts every creation and deletion once unblocked") {
  // ReplicaSet and Job controllers count the creations and deletions they observe
  // ("expectations"): coalescing may merge updates, never hide either.
  subscription_queue q(4);
  std::map<std::string, int> adds, deletes;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 50; ++i) {
      auto name = "p" + std::to_string(i);
      auto v1 = make_pod("ns", name, std::to_string(round * 10 + 1));
      auto v2 = make_pod("ns", name, std::to_string(round * 10 + 2));
      q.push(make(delta_type::added, v1));
      q.push(make(delta_type::updated, v2, v1));
      q.push(make(delta_type::deleted, v2, v2));
    }
  }
  for (const auto& d : drain(q)) {
    auto name = std::string(d.object->meta().name);
    if (d.type == delta_type::added)
      ++adds[name];
    else if (d.type == delta_type::deleted)
      ++deletes[name];
  }
  REQUIRE(adds.size() == 50);
  for (const auto& [name, n] : adds) {
    CHECK(n == 3);
    CHECK(deletes[name] == 3);
  }
  check_balance(q);
}

TEST_CASE("a delta without an object is refused, not queued") {
  subscription_queue q(2);
  CHECK_FALSE(q.push(delta{}));
  CHECK(q.push(make(delta_type::added, make_pod("ns", "a"))));
  CHECK(q.depth() == 1);
  CHECK(q.stats().pushed == 1);
  check_balance(q);
}
