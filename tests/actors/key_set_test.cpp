#include "actors/key_set.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>
#include <vector>

using kinformer::key_set;

namespace {

std::set<std::string> contents(const key_set& keys) {
  std::set<std::string> out;
  for (std::string_view key : keys)
    CHECK(out.emplace(key).second); // each key visited once
  return out;
}

} // namespace

TEST_CASE("key_set: insert, erase and contains agree with std::set through growth, erased "
          "slots and compaction") {
  std::mt19937 random(7);
  std::vector<std::string> pool;
  for (int i = 0; i < 3000; ++i) // keys of every length from 0 to 70
    pool.push_back("ns-" + std::to_string(i % 13) + "/" + std::string(i % 60, 'x') +
                   std::to_string(i));
  pool.push_back("");
  key_set keys;
  std::set<std::string> truth;
  for (int step = 0; step < 60000; ++step) {
    const std::string& key = pool[random() % pool.size()];
    // Phases: mostly inserts, then mostly erases, then mixed, so the set fills, empties, refills.
    const int phase = step / 15000;
    const bool insert = phase == 0   ? random() % 4 != 0
                        : phase == 1 ? random() % 4 == 0
                                     : random() % 2;
    if (insert)
      CHECK(keys.insert(key) == truth.insert(key).second);
    else
      CHECK(keys.erase(key) == (truth.erase(key) == 1));
    REQUIRE(keys.size() == truth.size());
    if (step % 997 == 0) {
      REQUIRE(contents(keys) == truth);
      for (int probe = 0; probe < 50; ++probe) {
        const std::string& k = pool[random() % pool.size()];
        CHECK(keys.contains(k) == truth.contains(k));
      }
    }
  }
  CHECK(contents(keys) == truth);
}

TEST_CASE("key_set: a copy is independent of the original, and erased bytes are given back") {
  key_set keys;
  for (int i = 0; i < 1000; ++i)
    keys.insert("default/pod-" + std::to_string(i));
  const std::size_t full = keys.heap_bytes();
  key_set copy = keys;
  for (int i = 0; i < 1000; i += 2)
    keys.erase("default/pod-" + std::to_string(i));
  CHECK(keys.size() == 500);
  for (int i = 1; i < 800; i += 2) // 900 of the 1000 gone: their bytes and most slots given back
    keys.erase("default/pod-" + std::to_string(i));
  CHECK(keys.size() == 100);
  CHECK(keys.heap_bytes() < full / 3);
  CHECK(copy.size() == 1000);
  CHECK(copy.contains("default/pod-0"));
  CHECK_FALSE(keys.contains("default/pod-0"));
  CHECK(keys.contains("default/pod-801"));
  for (int i = 801; i < 1000; i += 2)
    keys.erase("default/pod-" + std::to_string(i));
  CHECK(keys.empty());
  CHECK(keys.begin() == keys.end());
  CHECK(keys.heap_bytes() < full / 10);
  CHECK(copy.heap_bytes() <= full);
  CHECK(contents(copy).size() == 1000);
}
