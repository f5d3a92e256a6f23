#include "actors/store.hpp"
#include "tests/actors/test_objects.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <future>
#include <map>
#include <random>
#include <thread>

using namespace kinformer;
using kinformer::testing::make_pod;
using kinformer::testing::pod_spec;

namespace {

std::vector<std::string> keys_of(std::vector<object_ptr> objects) {
  std::vector<std::string> keys;
  for (const auto& obj : objects)
    keys.push_back(std::string(obj->key()));
  std::sort(keys.begin(), keys.end());
  return keys;
}

delta apply_ok(store& s, event_type type, const object_ptr& obj) {
  auto d = s.apply(type, obj);
  REQUIRE(d.ok());
  return std::move(d).value();
}

label_selector labels(std::string_view text) {
  auto sel = label_selector::parse(text);
  REQUIRE(sel.ok());
  return *sel;
}

field_selector fields(std::string_view text) {
  auto sel = field_selector::parse(text);
  REQUIRE(sel.ok());
  return *sel;
}

} // namespace

TEST_CASE("watch events become added, updated and deleted deltas") {
  store s;
  auto a1 = make_pod("ns", "a", "10");
  auto d = apply_ok(s, event_type::added, a1);
  CHECK(d.type == delta_type::added);
  CHECK(d.object == a1);
  CHECK(d.old_object == nullptr);
  CHECK_FALSE(d.initial_list);
  CHECK(s.size() == 1);
  CHECK(s.get("ns/a") == a1);
  CHECK(s.resource_version() == "10");

  auto a2 = make_pod("ns", "a", "11");
  d = apply_ok(s, event_type::modified, a2);
  CHECK(d.type == delta_type::updated);
  CHECK(d.object == a2);
  CHECK(d.old_object == a1);
  CHECK(s.get("ns/a") == a2);
  CHECK(s.size() == 1);

  auto a3 = make_pod("ns", "a", "12");
  d = apply_ok(s, event_type::deleted, a3);
  CHECK(d.type == delta_type::deleted);
  CHECK(d.object == a3);
  CHECK(d.old_object == a2);
  CHECK_FALSE(d.final_state_unknown);
  CHECK(s.get("ns/a") == nullptr);
  CHECK(s.size() == 0);
  CHECK(s.resource_version() == "12");
}

TEST_CASE("events are applied by what the store holds, as client-go does") {
  store s;
  auto b1 = make_pod("ns", "b", "1");
  // MODIFIED for an unknown key adds it; ADDED for a known key updates it.
  CHECK(apply_ok(s, event_type::modified, b1).type == delta_type::added);
  auto b2 = make_pod("ns", "b", "2");
  auto d = apply_ok(s, event_type::added, b2);
  CHECK(d.type == delta_type::updated);
  CHECK(d.old_object == b1);
  // A delete of an unknown key still reaches the handlers, with nothing stored before.
  auto c = make_pod("ns", "c", "3");
  d = apply_ok(s, event_type::deleted, c);
  CHECK(d.type == delta_type::deleted);
  CHECK(d.object == c);
  CHECK(d.old_object == nullptr);
  CHECK(s.size() == 1);
}

TEST_CASE("bookmarks, errors and missing objects are refused with a clear error") {
  store s;
  auto bookmark = s.apply(event_type::bookmark, make_pod("ns", "a"));
  REQUIRE_FALSE(bookmark.ok());
  CHECK(bookmark.err().code == errc::invalid_argument);
  CHECK(bookmark.err().message == "store: cannot apply a BOOKMARK event");
  auto error = s.apply(event_type::error, make_pod("ns", "a"));
  REQUIRE_FALSE(error.ok());
  auto empty = s.apply(event_type::added, nullptr);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.err().message == "store: ADDED event without an object");
  CHECK(s.size() == 0);

  s.set_resource_version("77");
  CHECK(s.resource_version() == "77");
}

TEST_CASE("the first replace is the initial list") {
  store s;
  CHECK_FALSE(s.has_synced());
  auto deltas = s.replace({make_pod("ns", "a", "1"), make_pod("ns", "b", "2")}, "5");
  REQUIRE(deltas.size() == 2);
  for (const auto& d : deltas) {
    CHECK(d.type == delta_type::added);
    CHECK(d.initial_list);
  }
  CHECK(deltas[0].object->key() == "ns/a");
  CHECK(deltas[1].object->key() == "ns/b");
  CHECK(s.has_synced());
  CHECK(s.resource_version() == "5");
  CHECK(s.size() == 2);
}

TEST_CASE("a relist yields updated, sync, added and final-state-unknown deletes") {
  store s;
  auto same = make_pod("ns", "same", "1");
  auto changed = make_pod("ns", "changed", "2");
  auto gone_b = make_pod("ns", "gone-b", "3");
  auto gone_a = make_pod("ns", "gone-a", "4");
  (void)s.replace({same, changed, gone_b, gone_a}, "10");

  auto same_relisted = make_pod("ns", "same", "1");
  auto changed_now = make_pod("ns", "changed", "20");
  auto fresh = make_pod("ns", "fresh", "21");
  auto deltas = s.replace({same_relisted, changed_now, fresh}, "30");
  REQUIRE(deltas.size() == 5);

  // Listed items in list order...
  CHECK(deltas[0].type == delta_type::sync);
  CHECK(deltas[0].object == same); // the stored object is kept: nothing changed
  CHECK(deltas[1].type == delta_type::updated);
  CHECK(deltas[1].object == changed_now);
  CHECK(deltas[1].old_object == changed);
  CHECK(deltas[2].type == delta_type::added);
  CHECK(deltas[2].object == fresh);
  // ...then the vanished ones, by key, carrying the last known state.
  CHECK(deltas[3].type == delta_type::deleted);
  CHECK(deltas[3].object == gone_a);
  CHECK(deltas[3].final_state_unknown);
  CHECK(deltas[4].type == delta_type::deleted);
  CHECK(deltas[4].object == gone_b);
  CHECK(deltas[4].final_state_unknown);
  for (const auto& d : deltas)
    CHECK_FALSE(d.initial_list);

  CHECK(keys_of(s.list()) == std::vector<std::string>{"ns/changed", "ns/fresh", "ns/same"});
  CHECK(s.get("ns/same") == same);
  CHECK(s.resource_version() == "30");
}

TEST_CASE("a held view gives each stored object once, and a relist counts it") {
  store s;
  auto same = make_pod("ns", "same", "1");
  auto changed = make_pod("ns", "changed", "2");
  auto node = make_pod("", "node-1", "3");
  (void)s.replace({same, changed, node}, "10");
  auto held = s.held_view();
  CHECK(held->take("other", "same") == nullptr);
  CHECK(held->take("ns", "missing") == nullptr);
  auto handed_on = held->take("ns", "same");
  CHECK(handed_on == same);
  CHECK(held->take("ns", "same") == nullptr); // taken: the view no longer holds it
  CHECK(held->take("", "node-1") == node);

  // The relist's decoder handed on `same` itself; `changed` came anew, and so did `node`, at
  // the same resourceVersion (made before the view was there).
  auto changed_now = make_pod("ns", "changed", "20");
  auto node_again = make_pod("", "node-1", "3");
  (void)s.replace({handed_on, changed_now, node_again}, "30");
  CHECK(s.listed_as_stored() == 1);
  CHECK(s.get("ns/node-1") == nullptr);
  CHECK(s.get("node-1") == node); // the stored one stays either way

  // The view is a moment: later writes do not reach it.
  CHECK(held->take("ns", "changed") == changed);
  CHECK(s.get("ns/changed") == changed_now);
}

TEST_CASE("a held view keeps no version once its item is taken") {
  store s;
  std::weak_ptr<const object> first;
  {
    auto pod = make_pod("ns", "p", "1");
    first = pod;
    (void)s.replace({pod}, "1");
  }
  auto held = s.held_view();
  // The list names the pod at a new version: the decoder takes the held one and makes anew.
  CHECK(held->take("ns", "p") != nullptr);
  (void)s.replace({make_pod("ns", "p", "2")}, "2");
  CHECK(first.expired()); // gone with the store's reference, while the view lives on
}

TEST_CASE("a held view of many objects finds each, in any order, exactly once") {
  store s;
  std::vector<object_ptr> pods;
  for (int i = 0; i < 1000; ++i)
    pods.push_back(make_pod("ns-" + std::to_string(i % 7), "p" + std::to_string(i), "1"));
  (void)s.replace(pods, "1");
  auto held = s.held_view();
  std::mt19937 random(7);
  auto order = pods;
  std::shuffle(order.begin(), order.end(), random);
  std::size_t found = 0;
  for (const auto& p : order) {
    found += held->take(p->meta().namespace_, p->meta().name) == p;
    CHECK(held->take(p->meta().namespace_, p->meta().name) == nullptr);
  }
  CHECK(found == pods.size());
}

TEST_CASE("an empty relist deletes everything, and an index forgets it all") {
  store s;
  (void)s.replace({make_pod("a", "x"), make_pod("b", "y")}, "1");
  auto deltas = s.replace({}, "2");
  REQUIRE(deltas.size() == 2);
  CHECK(deltas[0].type == delta_type::deleted);
  CHECK(s.size() == 0);
  auto values = s.snapshot().list_index_values(namespace_index_name);
  REQUIRE(values.ok());
  CHECK(values->empty());
}

TEST_CASE("a snapshot does not see later writes") {
  store s;
  auto a1 = make_pod("ns", "a", "1");
  auto b1 = make_pod("ns", "b", "1");
  (void)s.replace({a1, b1}, "1");
  auto before = s.snapshot();

  auto a2 = make_pod("ns", "a", "2");
  (void)apply_ok(s, event_type::modified, a2);
  (void)apply_ok(s, event_type::deleted, b1);
  (void)apply_ok(s, event_type::added, make_pod("ns", "c", "3"));
  s.set_resource_version("9");

  CHECK(before.size() == 2);
  CHECK(before.resource_version() == "1");
  CHECK(before.get("ns/a") == a1);
  CHECK(before.get("ns/b") == b1);
  CHECK(before.get("ns/c") == nullptr);
  CHECK(keys_of(before.list()) == std::vector<std::string>{"ns/a", "ns/b"});
  auto ns_before = before.by_index(namespace_index_name, "ns");
  REQUIRE(ns_before.ok());
  CHECK(keys_of(*ns_before) == std::vector<std::string>{"ns/a", "ns/b"});

  auto after = s.snapshot();
  CHECK(after.size() == 2);
  CHECK(after.get("ns/a") == a2);
  CHECK(after.get("ns/b") == nullptr);
  CHECK(after.resource_version() == "9");
  CHECK(keys_of(after.list()) == std::vector<std::string>{"ns/a", "ns/c"});
  CHECK(s.get("ns/a") == a2);
}

TEST_CASE("writes after many snapshots stay correct, and each snapshot stays as it was") {
  // A random walk checked against a plain map, with snapshots taken all along the way.
  store s(store_options{8, 4}); // few shards: many writes hit shared shards
  std::mt19937 rng(1234);
  std::map<std::string, object_ptr> model;
  std::vector<std::pair<store_snapshot, std::map<std::string, object_ptr>>> taken;
  for (int step = 0; step < 3000; ++step) {
    std::string ns = "ns" + std::to_string(rng() % 3);
    std::string name = "p" + std::to_string(rng() % 40);
    auto key = ns + "/" + name;
    if (rng() % 4 == 0) {
      (void)apply_ok(s, event_type::deleted, make_pod(ns, name, std::to_string(step)));
      model.erase(key);
    } else {
      auto obj = make_pod(ns, name, std::to_string(step));
      (void)apply_ok(s, event_type::modified, obj);
      model[key] = obj;
    }
    if (step % 97 == 0)
      taken.emplace_back(s.snapshot(), model);
  }
  REQUIRE(s.size() == model.size());
  for (const auto& [key, obj] : model)
    CHECK(s.get(key) == obj);

  for (const auto& [snap, expected] : taken) {
    REQUIRE(snap.size() == expected.size());
    auto listed = snap.list();
    REQUIRE(listed.size() == expected.size());
    for (const auto& obj : listed)
      CHECK(expected.at(std::string(obj->key())) == obj);
    for (int n = 0; n < 3; ++n) {
      std::string ns = "ns" + std::to_string(n);
      std::size_t in_ns = std::count_if(expected.begin(), expected.end(), [&](const auto& kv) {
        return kv.second->meta().namespace_ == ns;
      });
      auto by_ns = snap.by_index(namespace_index_name, ns);
      REQUIRE(by_ns.ok());
      CHECK(by_ns->size() == in_ns);
    }
  }
}

TEST_CASE("another thread reads a snapshot while the writer keeps writing") {
  store s;
  std::vector<object_ptr> first;
  for (int i = 0; i < 500; ++i)
    first.push_back(make_pod("ns", "p" + std::to_string(i), "1"));
  (void)s.replace(first, "1");

  std::promise<store_snapshot> handed;
  auto reader = std::async(std::launch::async, [snap_future = handed.get_future()]() mutable {
    auto snap = snap_future.get();
    std::size_t seen = 0;
    for (int round = 0; round < 20; ++round)
      for (int i = 0; i < 500; ++i) {
        auto obj = snap.get("ns/p" + std::to_string(i));
        if (obj && obj->meta().resource_version == "1")
          ++seen;
      }
    return seen;
  });
  handed.set_value(s.snapshot());
  for (int i = 0; i < 500; ++i) {
    (void)apply_ok(s, event_type::modified, make_pod("ns", "p" + std::to_string(i), "2"));
    if (i % 2 == 0)
      (void)apply_ok(s, event_type::deleted, make_pod("ns", "p" + std::to_string(i), "3"));
  }
  CHECK(reader.get() == 20u * 500u);
  CHECK(s.size() == 250);
}

TEST_CASE("lists filter by namespace, labels and fields") {
  store s;
  (void)s.replace(
      {
          make_pod(pod_spec{"a", "web-1", "1", {{"app", "web"}}, "node-1", "Running"}),
          make_pod(pod_spec{"a", "web-2", "1", {{"app", "web"}}, "node-2", "Pending"}),
          make_pod(pod_spec{"a", "db-1", "1", {{"app", "db"}}, "node-1", "Running"}),
          make_pod(pod_spec{"b", "web-3", "1", {{"app", "web"}}, "node-1", "Running"}),
          make_pod(pod_spec{"", "cluster-thing", "1", {{"app", "web"}}, "", "Running"}),
      },
      "1");
  auto snap = s.snapshot();
  CHECK(snap.list("", {}, {}).size() == 5);
  CHECK(keys_of(snap.list("a", {}, {})) ==
        std::vector<std::string>{"a/db-1", "a/web-1", "a/web-2"});
  CHECK(snap.list("missing", {}, {}).empty());
  CHECK(keys_of(snap.list("a", labels("app=web"), {})) ==
        std::vector<std::string>{"a/web-1", "a/web-2"});
  CHECK(keys_of(snap.list("", labels("app=web"), fields("status.phase=Running"))) ==
        std::vector<std::string>{"a/web-1", "b/web-3", "cluster-thing"});
  CHECK(keys_of(snap.list("a", {}, fields("spec.nodeName!=node-1"))) ==
        std::vector<std::string>{"a/web-2"});
  // A missing field reads as "".
  CHECK(keys_of(snap.list("", {}, fields("spec.nodeName="))) ==
        std::vector<std::string>{"cluster-thing"});
}

TEST_CASE("a field index answers an = term, and the other terms still filter") {
  store s;
  REQUIRE(s.add_field_index("spec.nodeName").ok());
  (void)s.replace(
      {
          make_pod(pod_spec{"a", "web-1", "1", {{"app", "web"}}, "node-1", "Running"}),
          make_pod(pod_spec{"a", "db-1", "1", {{"app", "db"}}, "node-1", "Pending"}),
          make_pod(pod_spec{"b", "web-3", "1", {{"app", "web"}}, "node-1", "Running"}),
          make_pod(pod_spec{"b", "web-4", "1", {{"app", "web"}}, "node-2", "Running"}),
      },
      "1");
  auto snap = s.snapshot();
  CHECK(keys_of(snap.list("", {}, fields("spec.nodeName=node-1"))) ==
        std::vector<std::string>{"a/db-1", "a/web-1", "b/web-3"});
  CHECK(keys_of(snap.list("b", {}, fields("spec.nodeName=node-1"))) ==
        std::vector<std::string>{"b/web-3"});
  CHECK(keys_of(snap.list("a", labels("app=web"),
                          fields("spec.nodeName=node-1,status.phase=Running"))) ==
        std::vector<std::string>{"a/web-1"});
  CHECK(snap.list("", {}, fields("spec.nodeName=node-9")).empty());

  // A custom extractor is trusted for its term: the index decides, not the JSON path.
  REQUIRE(s.add_field_index("spec.upperNode", [](const object& obj) {
             auto node = field_value(obj, "spec.nodeName").value_or("");
             std::transform(node.begin(), node.end(), node.begin(), ::toupper);
             return std::vector<std::string>{node};
           }).ok());
  CHECK(keys_of(s.snapshot().list("b", {}, fields("spec.upperNode=NODE-2"))) ==
        std::vector<std::string>{"b/web-4"});
}

TEST_CASE("heap bytes grow with the content") {
  store s;
  auto empty_bytes = s.heap_bytes();
  std::vector<object_ptr> items;
  for (int i = 0; i < 100; ++i)
    items.push_back(make_pod("ns", "p" + std::to_string(i)));
  (void)s.replace(items, "1");
  auto full_bytes = s.heap_bytes();
  CHECK(full_bytes > empty_bytes + 100 * items[0]->heap_bytes());
}

TEST_CASE("a late subscriber starts from added deltas flagged initial-list") {
  store s;
  (void)s.replace({make_pod("ns", "a"), make_pod("ns", "b")}, "1");
  (void)s.apply(event_type::added, make_pod("ns", "c", "2"));
  auto deltas = initial_deltas(s.snapshot());
  REQUIRE(deltas.size() == 3);
  std::vector<object_ptr> objects;
  for (const auto& d : deltas) {
    CHECK(d.type == delta_type::added);
    CHECK(d.initial_list);
    CHECK(d.old_object == nullptr);
    objects.push_back(d.object);
  }
  CHECK(keys_of(objects) == std::vector<std::string>{"ns/a", "ns/b", "ns/c"});
}

TEST_CASE("a default-constructed snapshot is empty") {
  store_snapshot empty;
  CHECK(empty.size() == 0);
  CHECK(empty.get("ns/a") == nullptr);
  CHECK(empty.list().empty());
  CHECK(empty.list("ns", {}, {}).empty());
  CHECK_FALSE(empty.by_index(namespace_index_name, "ns").ok());
}

TEST_CASE("a replace fed in batches applies each batch at once and deletes only at the end") {
  store s;
  (void)s.replace({make_pod("ns", "kept", "1"), make_pod("ns", "gone", "2")}, "10");

  s.begin_replace();
  auto first = s.replace_batch({make_pod("ns", "kept", "1"), make_pod("ns", "new", "11")});
  REQUIRE(first.size() == 2);
  CHECK(first[0].type == delta_type::sync);
  CHECK(first[1].type == delta_type::added);
  CHECK_FALSE(first[1].initial_list); // the store had synced before
  // Applied while the list goes on: visible now; nothing deleted yet.
  CHECK(s.get("ns/new") != nullptr);
  CHECK(s.get("ns/gone") != nullptr);
  CHECK(s.replacing());
  auto second = s.replace_batch({make_pod("ns", "later", "12")});
  REQUIRE(second.size() == 1);
  auto deletions = s.finish_replace("20");
  REQUIRE(deletions.size() == 1);
  CHECK(deletions[0].type == delta_type::deleted);
  CHECK(deletions[0].final_state_unknown);
  CHECK(deletions[0].object->key() == "ns/gone");
  CHECK(s.size() == 3);
  CHECK(s.resource_version() == "20");
  CHECK_FALSE(s.replacing());
}

TEST_CASE("a list that broke off is dropped by the next one") {
  store s;
  s.begin_replace();
  (void)s.replace_batch({make_pod("ns", "a", "1"), make_pod("ns", "b", "2")});
  CHECK_FALSE(s.has_synced()); // an unfinished first list does not sync the store
  // The list failed; the next one lists only b: a must be deleted, though the broken list saw it.
  s.begin_replace();
  (void)s.replace_batch({make_pod("ns", "b", "2")});
  auto deletions = s.finish_replace("5");
  REQUIRE(deletions.size() == 1);
  CHECK(deletions[0].object->key() == "ns/a");
  CHECK(deletions[0].initial_list);
  CHECK(s.has_synced());
}

TEST_CASE("watch events during a replace: what the list saw stays listed, what it did not goes") {
  store s;
  (void)s.replace({make_pod("ns", "a", "1"), make_pod("ns", "b", "2")}, "10");
  s.begin_replace();
  (void)s.replace_batch({make_pod("ns", "a", "1"), make_pod("ns", "b", "2")});
  // An event still in flight deletes a listed object, and another brings it back: still listed.
  REQUIRE(s.apply(event_type::deleted, make_pod("ns", "a", "3")).ok());
  REQUIRE(s.apply(event_type::added, make_pod("ns", "a", "4")).ok());
  // One updates a listed object in place: still listed.
  REQUIRE(s.apply(event_type::modified, make_pod("ns", "b", "5")).ok());
  // One adds an object the list did not have: the list is the truth, it goes at the end.
  REQUIRE(s.apply(event_type::added, make_pod("ns", "c", "6")).ok());
  auto deletions = s.finish_replace("20");
  REQUIRE(deletions.size() == 1);
  CHECK(deletions[0].object->key() == "ns/c");
  CHECK(s.size() == 2);
  CHECK(s.get("ns/a")->meta().resource_version == "4");
  CHECK(s.get("ns/b")->meta().resource_version == "5");

  // The next replace counts afresh: entries listed by the one before are not listed by it.
  s.begin_replace();
  (void)s.replace_batch({make_pod("ns", "b", "5")});
  deletions = s.finish_replace("30");
  REQUIRE(deletions.size() == 1);
  CHECK(deletions[0].object->key() == "ns/a");
}
