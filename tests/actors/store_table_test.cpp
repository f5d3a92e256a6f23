#include "actors/store_table.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

using kinformer::object;
using kinformer::object_ptr;
using kinformer::store_table;

namespace {

object_ptr pod(const std::string& ns, const std::string& name, int version) {
  auto made = object::parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"namespace":")" + ns +
                            R"(","name":")" + name + R"(","resourceVersion":")" +
                            std::to_string(version) + R"("}})");
  REQUIRE(made);
  return *made;
}

// Key -> resourceVersion of every entry, visiting each once.
std::map<std::string, std::string> contents(const store_table& table) {
  std::map<std::string, std::string> out;
  for (const auto& entry : table)
    CHECK(out.emplace(entry.object->key(), entry.object->meta().resource_version).second);
  return out;
}

} // namespace

TEST_CASE("store_table: insert, find, update in place and erase agree with std::map through "
          "growth and long probe runs") {
  std::mt19937 random(11);
  std::vector<object_ptr> pool;
  for (int i = 0; i < 2000; ++i)
    pool.push_back(pod("ns-" + std::to_string(i % 7), "pod-" + std::to_string(i), i));
  store_table table;
  std::map<std::string, std::string> truth;
  for (int step = 0; step < 60000; ++step) {
    const object_ptr& obj = pool[random() % pool.size()];
    const std::string key(obj->key());
    // Phases: mostly inserts, then mostly erases, then mixed: the table fills, empties, refills.
    const int phase = step / 15000;
    const bool insert = phase == 0   ? random() % 4 != 0
                        : phase == 1 ? random() % 4 == 0
                                     : random() % 2;
    if (insert) {
      auto [it, inserted] = table.insert(obj);
      CHECK(inserted == truth.emplace(key, std::string(obj->meta().resource_version)).second);
      REQUIRE(it != table.end());
      CHECK(it->object->key() == key);
    } else {
      auto it = table.find(key);
      CHECK((it != table.end()) == truth.contains(key));
      if (it != table.end()) {
        table.erase(it);
        truth.erase(key);
      }
    }
    REQUIRE(table.size() == truth.size());
    if (step % 997 == 0) {
      REQUIRE(contents(table) == truth);
      for (const auto& other : pool) // every key, present or not, is found exactly when stored
        CHECK((table.find(other->key()) != table.end()) ==
              truth.contains(std::string(other->key())));
    }
  }
  CHECK(contents(table) == truth);
  // At most 3/4 full, whatever the history.
  CHECK(table.size() * 4 <= table.capacity() * 3);
}

TEST_CASE("store_table: a stored entry is updated in place, and a copy is independent") {
  store_table table;
  for (int i = 0; i < 100; ++i)
    table.insert(pod("default", "pod-" + std::to_string(i), 1));
  auto it = table.find("default/pod-7");
  REQUIRE(it != table.end());
  it->object = pod("default", "pod-7", 2); // the same key: same hash, same slot
  it->listed_in = 5;
  CHECK(table.find("default/pod-7")->object->meta().resource_version == "2");
  CHECK(table.find("default/pod-7")->listed_in == 5);

  store_table copy = table;
  copy.erase(copy.find("default/pod-7"));
  copy.insert(pod("default", "pod-100", 1));
  CHECK(copy.find("default/pod-7") == copy.end());
  CHECK(table.find("default/pod-7") != table.end());
  CHECK(table.find("default/pod-100") == table.end());
  CHECK(table.size() == 100);
  CHECK(copy.size() == 100);
  const store_table empty;
  CHECK(empty.find("anything") == empty.end());
}

TEST_CASE("store_table: inserting a stored key never grows it, erasing most of it shrinks it") {
  store_table table;
  for (int i = 0; i < 6; ++i) // 6 of 8 slots: the next new key grows the table
    table.insert(pod("default", "pod-" + std::to_string(i), 1));
  REQUIRE(table.capacity() == 8);
  CHECK_FALSE(table.insert(pod("default", "pod-3", 2)).second);
  CHECK(table.capacity() == 8);
  CHECK(table.insert(pod("default", "pod-6", 1)).second);
  CHECK(table.capacity() == 16);

  for (int i = 7; i < 10000; ++i)
    table.insert(pod("default", "pod-" + std::to_string(i), 1));
  const std::size_t full = table.capacity();
  for (int i = 100; i < 10000; ++i)
    table.erase(table.find("default/pod-" + std::to_string(i)));
  CHECK(table.size() == 100);
  CHECK(table.capacity() * 16 <= full);
  CHECK(table.size() * 4 <= table.capacity() * 3);
  for (int i = 0; i < 100; ++i)
    CHECK(table.find("default/pod-" + std::to_string(i)) != table.end());
}
