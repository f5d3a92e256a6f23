// A real informer behind a proxy that damages the server's bytes (its lists and its watch
// streams) on the first connections: every damaged response is refused, counted as malformed,
// and retried, and the informer ends with exactly the server's objects, byte for byte. Nothing
// damaged reaches the store.

#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/support/corrupting_proxy.hpp"
#include "tests/support/delta_recorder.hpp"
#include "tests/support/sim_actor_fixture.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace kinformer;
using namespace std::chrono_literals;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};

std::string config_map(int i, const std::string& value) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-)" + std::to_string(i) +
         R"(","namespace":"default","labels":{"app":"demo"}},"data":{"value":")" + value +
         R"(","padding":")" + std::string(300, 'x') + R"("}})";
}

struct fixture : kinformer::testing::sim_actor_fixture {
  // key -> the server's JSON text of the object.
  std::map<std::string, std::string> truth() {
    std::map<std::string, std::string> out;
    for (const auto& v : server.store().truth(configmaps)) {
      auto slash = v.key.find('/');
      auto stored = server.store().get(configmaps, v.key.substr(0, slash), v.key.substr(slash + 1));
      REQUIRE(stored.ok());
      out[v.key] = *stored->json;
    }
    return out;
  }
  std::map<std::string, std::string> truth_versions() {
    std::map<std::string, std::string> out;
    for (const auto& v : server.store().truth(configmaps))
      out[v.key] = std::to_string(v.resource_version);
    return out;
  }
};

template <class T, class Atom>
T ask(caf::actor_system& sys, const informer_actor& inf, Atom atom) {
  caf::scoped_actor self{sys};
  T out{};
  self->request(inf, caf::infinite, atom)
      .receive([&](T value) { out = std::move(value); },
               [&](caf::error& err) { FAIL(sys.render(err)); });
  return out;
}

} // namespace

TEST_CASE_METHOD(fixture, "an informer behind a proxy that damages the server's bytes refuses "
                          "them, retries, and ends with exactly the server's objects") {
  for (int i = 0; i < 60; ++i)
    REQUIRE(server.store().create(configmaps, "default", config_map(i, "v0")).ok());
  // The first 6 connections (lists and watches) have a byte in every 2 KiB damaged.
  kinformer::testing::corrupting_proxy proxy(server.port(), 6, 2048);
  auto through_proxy = api_client::create(*from_server_url(proxy.url()));
  REQUIRE(through_proxy.ok());
  std::shared_ptr<api_client> damaged_client = std::move(through_proxy).value();

  informer_config c;
  c.resource = configmaps;
  c.kind = "ConfigMap";
  c.namespace_ = "default";
  c.watch.page_size = 25;
  c.retry.initial = 10ms;
  c.retry.cap = 100ms;
  auto inf = spawn_informer(*system, damaged_client, c);
  spawned.push_back(caf::actor_cast<caf::actor>(inf));
  kinformer::testing::delta_recorder rec;
  handler_callbacks cb;
  cb.on_delta = [&rec](const delta& d) { rec.record(d); };
  cb.on_synced = [&rec] { rec.mark_synced(); };
  spawned.push_back(caf::actor_cast<caf::actor>(spawn_handler(*system, inf, std::move(cb))));

  REQUIRE(rec.wait_for([](const auto& r) { return r.synced() >= 1; }, 30s));
  // Changes while the watch streams are damaged too.
  for (int round = 1; round <= 3; ++round)
    for (int i = 0; i < 60; i += 3)
      REQUIRE(server.store()
                  .update(configmaps, "default", "cm-" + std::to_string(i),
                          config_map(i, "v" + std::to_string(round)))
                  .ok());
  for (int i = 1; i < 60; i += 10)
    REQUIRE(server.store().remove(configmaps, "default", "cm-" + std::to_string(i)).ok());

  auto versions = truth_versions();
  REQUIRE(rec.wait_for([&](const auto& r) { return r.state() == versions; }, 30s));
  // The store holds the server's bytes, not damaged ones.
  auto snapshot = ask<store_snapshot>(*system, inf, atoms::snapshot_atom::value);
  std::map<std::string, std::string> stored;
  for (const auto& obj : snapshot.list())
    stored[std::string(obj->key())] = std::string(obj->json_text());
  CHECK(stored == truth());

  CHECK(proxy.connections() > 6);
  CHECK(proxy.bytes_damaged() > 0);
  auto stats = ask<informer_stats>(*system, inf, atoms::stats_atom::value);
  std::uint64_t malformed = 0;
  for (const auto* by_reason : {&stats.relists_by_reason, &stats.watch_starts_by_reason})
    if (auto it = by_reason->find("malformed"); it != by_reason->end())
      malformed += it->second;
  CHECK(malformed >= 1);
  CHECK(rec.out_of_order().empty());
}
