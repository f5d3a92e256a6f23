// Objects that are valid JSON but not what the informer watches never reach its store or a
// handler: the watch that carried one is restarted, and the informer converges on what the server
// sends next. The server is scripted, since no real (or simulated) API server sends such objects.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/protocol/support/scripted_server.hpp"
#include "tests/support/delta_recorder.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <string>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::test::scripted_server;
using kinformer::test::server_exchange;
using kinformer::testing::delta_recorder;

namespace {

std::string event(const char* type, const std::string& object) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object + "}\n";
}

std::string pod(const std::string& name, const std::string& resource_version) {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"d","resourceVersion":")" + resource_version + R"("}})";
}

} // namespace

TEST_CASE("malformed objects in watch events never reach the store or a handler, and the "
          "informer converges") {
  std::atomic<int> lists{0}, watches{0};
  std::promise<void> finished;
  std::shared_future<void> done = finished.get_future().share();
  const std::string huge_name(3 << 20, 'x');
  scripted_server server([&](server_exchange& ex) {
    const auto watch = ex.request().query("watch");
    if (!watch || *watch == "false") {
      ++lists;
      ex.respond(200,
                 R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},)"
                 R"("items":[{"metadata":{"name":"a","namespace":"d","resourceVersion":"5"}}]})");
      return;
    }
    const int n = ++watches;
    ex.start_chunked();
    if (n == 1) // the issue's example: no namespace, no resourceVersion, a 3 MB name
      ex.chunk(event("MODIFIED", R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" +
                                     huge_name + R"("}})"));
    else if (n == 2) // another kind on the pods watch
      ex.chunk(event("ADDED", R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c",)"
                              R"("namespace":"d","resourceVersion":"11"}})"));
    else if (n == 3) // no name
      ex.chunk(event("DELETED", R"({"kind":"Pod","apiVersion":"v1","metadata":{)"
                                R"("namespace":"d","resourceVersion":"11"}})"));
    else if (n == 4)
      ex.chunk(event("MODIFIED", pod("a", "12")) + event("ADDED", pod("b", "13")));
    done.wait_for(20s); // then the watch stays open, quiet, until the test ends
    ex.end_chunked();
  });

  auto created = api_client::create(*from_server_url(server.url()));
  REQUIRE(created.ok());
  std::shared_ptr<api_client> client = std::move(created).value();
  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  {
    caf::actor_system system{cfg};
    informer_config config;
    config.resource = {"", "v1", "pods"};
    config.kind = "Pod";
    config.retry.initial = 10ms;
    config.retry.cap = 50ms;
    auto informer = spawn_informer(system, client, config);
    delta_recorder rec;
    handler_callbacks callbacks;
    callbacks.on_delta = [&rec](const delta& d) { rec.record(d); };
    callbacks.on_synced = [&rec] { rec.mark_synced(); };
    auto handler = spawn_handler(system, informer, std::move(callbacks), {});

    const std::map<std::string, std::string> expected{{"d/a", "12"}, {"d/b", "13"}};
    const bool converged =
        rec.wait_for([&](const delta_recorder& r) { return r.state() == expected; }, 20s);
    finished.set_value();
    REQUIRE(converged);
    CHECK(watches >= 4);
    for (const auto& d : rec.deltas_copy()) {
      CHECK(d.object->kind() == "Pod");
      CHECK(d.object->meta().name.size() == 1);
      CHECK(!d.object->meta().namespace_.empty());
    }
    CHECK(rec.out_of_order().empty());
    caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(informer, caf::exit_reason::user_shutdown);
  }
}
