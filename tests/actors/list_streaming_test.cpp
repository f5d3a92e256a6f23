// A list's items reach the informer as they are decoded, not when the list has ended: a real
// informer against a scripted server that holds an unpaged list's body midway.
// - The handler sees the first items while the rest of the body is still held back, so a list
//   of a million objects (an unpaged one, as a relist after an expired continue token makes) is
//   never held whole, on top of the store, by the reflector.
// - A first page broken off midway and asked again may be another snapshot: what the broken
//   attempt streamed in is not counted as listed, so objects it named that are gone are deleted.
// - A paged list's next page is asked for as soon as a page's continue token has come, before
//   its items: the next page is on its way while this one is decoded.

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
#include <map>
#include <string>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::test::scripted_server;
using kinformer::test::server_exchange;
using kinformer::testing::delta_recorder;

namespace {

std::string pod(const std::string& name, const std::string& resource_version) {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"d","resourceVersion":")" + resource_version + R"("}})";
}

// "{...,"items":[" then `count` pods named prefix0.. (no closing bracket).
std::string list_head_and_items(const std::string& prefix, int count, const std::string& rv) {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
                    R"("},"items":[)";
  for (int i = 0; i < count; ++i)
    out += (i ? "," : "") + pod(prefix + std::to_string(i), rv);
  return out;
}

std::map<std::string, std::string> pods_named(const std::string& prefix, int count,
                                              const std::string& rv) {
  std::map<std::string, std::string> out;
  for (int i = 0; i < count; ++i)
    out["d/" + prefix + std::to_string(i)] = rv;
  return out;
}

bool is_list(server_exchange& ex) {
  const auto watch = ex.request().query("watch");
  return !watch || *watch == "false";
}

// A watch that stays open and quiet until the test ends.
void quiet_watch(server_exchange& ex, const std::shared_future<void>& done) {
  ex.start_chunked();
  done.wait_for(20s);
  ex.end_chunked();
}

informer_config unpaged_pods() {
  informer_config config;
  config.resource = {"", "v1", "pods"};
  config.kind = "Pod";
  config.watch.page_size = 0; // one unpaged list, as after an expired continue token
  config.retry.initial = 10ms;
  config.retry.cap = 50ms;
  return config;
}

// Runs a pod informer (unpaged unless `config` says otherwise) against `url`, with a handler
// recording into `rec`, while `during()` runs (it waits on `rec`); then stops both actors.
template <class During>
void with_informer(const std::string& url, delta_recorder& rec, During during,
                   const informer_config& config = unpaged_pods()) {
  auto created = api_client::create(*from_server_url(url));
  REQUIRE(created.ok());
  std::shared_ptr<api_client> client = std::move(created).value();
  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system system{cfg};
  auto informer = spawn_informer(system, client, config);
  handler_callbacks callbacks;
  callbacks.on_delta = [&rec](const delta& d) { rec.record(d); };
  callbacks.on_synced = [&rec] { rec.mark_synced(); };
  auto handler = spawn_handler(system, informer, std::move(callbacks), {});
  during();
  caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(informer, caf::exit_reason::user_shutdown);
}

// The first page of a paged list (continue token c1): its metadata and a0 first, then a1 once
// `hold` returns.
template <class Hold>
void serve_first_page(server_exchange& ex, Hold hold) {
  ex.start_chunked();
  ex.chunk(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7",)"
           R"("continue":"c1"},"items":[)" +
           pod("a0", "7"));
  hold();
  ex.chunk("," + pod("a1", "7") + "]}");
  ex.end_chunked();
}

// Runs an informer with pages of 2 against `server` until it has synced a0, a1 (the first page)
// and b0, b1 (the second), or 30 s; then sets `finished` (the server's watches end).
bool sync_two_pages(const scripted_server& server, delta_recorder& rec,
                    std::promise<void>& finished) {
  informer_config paged = unpaged_pods();
  paged.watch.page_size = 2;
  auto expected = pods_named("a", 2, "7");
  expected.merge(pods_named("b", 2, "7"));
  bool synced = false;
  with_informer(
      server.url(), rec,
      [&] {
        synced = rec.wait_for(
            [&](const delta_recorder& r) { return r.synced() > 0 && r.state() == expected; }, 30s);
        finished.set_value();
      },
      paged);
  return synced;
}

} // namespace

TEST_CASE("an unpaged list's first items reach a handler while the rest of its body is held") {
  constexpr int first = 1500, rest = 500; // api_client hands items on 1000 at a time
  delta_recorder rec;
  std::promise<void> finished;
  std::shared_future<void> done = finished.get_future().share();
  std::atomic<bool> seen_before_end{false};
  scripted_server server([&](server_exchange& ex) {
    if (!is_list(ex))
      return quiet_watch(ex, done);
    ex.start_chunked();
    ex.chunk(list_head_and_items("a", first, "7"));
    // Hold the rest back until a handler has the first items (or give up after 10 s).
    seen_before_end =
        rec.wait_for([&](const delta_recorder& r) { return r.state().size() >= 256; }, 10s);
    std::string tail;
    for (int i = 0; i < rest; ++i)
      tail += "," + pod("b" + std::to_string(i), "7");
    ex.chunk(tail + "]}");
    ex.end_chunked();
  });

  auto expected = pods_named("a", first, "7");
  expected.merge(pods_named("b", rest, "7"));
  bool synced = false;
  with_informer(server.url(), rec, [&] {
    synced = rec.wait_for([&](const delta_recorder& r) { return r.state() == expected; }, 30s);
    finished.set_value();
  });
  CHECK(synced);
  CHECK(seen_before_end);
  CHECK(rec.out_of_order().empty());
}

TEST_CASE("what a first page broken off midway streamed in is not counted as listed when the "
          "page is asked again") {
  std::atomic<int> lists{0};
  std::promise<void> finished;
  std::shared_future<void> done = finished.get_future().share();
  scripted_server server([&](server_exchange& ex) {
    if (!is_list(ex))
      return quiet_watch(ex, done);
    if (++lists == 1) {
      // 300 pods, then the connection breaks: retried at once as the same request.
      ex.start_chunked();
      ex.chunk(list_head_and_items("old", 300, "5") + ",");
      ex.drop();
      return;
    }
    // The consistent read asked again sees another snapshot: the old pods are gone.
    ex.respond(200, list_head_and_items("new", 10, "9") + "]}");
  });

  delta_recorder rec;
  const auto expected = pods_named("new", 10, "9");
  bool converged = false;
  int lists_when_converged = 0;
  with_informer(server.url(), rec, [&] {
    converged = rec.wait_for(
        [&](const delta_recorder& r) { return r.synced() > 0 && r.state() == expected; }, 20s);
    // Counted now: once `finished` ends the quiet watch, the informer relists (a short watch),
    // and under TSan it once did so before it was stopped (3 lists).
    lists_when_converged = lists;
    finished.set_value();
  });
  CHECK(converged);
  CHECK(lists_when_converged == 2);
}

TEST_CASE("a paged list's next page is asked for while the page before it is still arriving") {
  std::promise<void> finished;
  std::shared_future<void> done = finished.get_future().share();
  std::promise<void> next_asked;
  std::shared_future<void> next_page_asked = next_asked.get_future().share();
  std::atomic<bool> asked_ahead{false};
  std::atomic<int> first_pages{0};
  std::atomic<int> next_pages{0};
  scripted_server server([&](server_exchange& ex) {
    if (!is_list(ex))
      return quiet_watch(ex, done);
    if (ex.request().query("continue") == "c1") {
      if (++next_pages == 1) // asked for once: a second request would be a page fetched twice
        next_asked.set_value();
      ex.respond(200, list_head_and_items("b", 2, "7") + "]}");
      return;
    }
    ++first_pages;
    // The continue token comes first, then one item; the second waits until page 2 is asked
    // for (or 10 s).
    serve_first_page(
        ex, [&] { asked_ahead = next_page_asked.wait_for(10s) == std::future_status::ready; });
  });

  delta_recorder rec;
  CHECK(sync_two_pages(server, rec, finished));
  CHECK(asked_ahead);
  CHECK(first_pages == 1);
  CHECK(next_pages == 1);
  CHECK(rec.out_of_order().empty());
}

TEST_CASE("a page asked for ahead that fails while the page before it still arrives is asked "
          "again, and the list ends whole") {
  const bool break_off = GENERATE(false, true); // a 500, or a body broken off midway
  INFO((break_off ? "broken off" : "500"));
  std::promise<void> finished;
  std::shared_future<void> done = finished.get_future().share();
  std::promise<void> failed;
  std::shared_future<void> next_page_failed = failed.get_future().share();
  std::atomic<bool> failed_ahead{false};
  std::atomic<int> first_pages{0};
  std::atomic<int> next_pages{0};
  scripted_server server([&](server_exchange& ex) {
    if (!is_list(ex))
      return quiet_watch(ex, done);
    if (ex.request().query("continue") == "c1") {
      if (++next_pages == 1) {
        if (break_off) {
          ex.start_chunked();
          ex.chunk(list_head_and_items("stale", 3, "7") + ",");
          ex.drop();
        } else {
          ex.respond(500, R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                          R"("message":"etcd is busy","reason":"InternalError","code":500})");
        }
        failed.set_value();
        return;
      }
      ex.respond(200, list_head_and_items("b", 2, "7") + "]}");
      return;
    }
    ++first_pages;
    // The first page's second item waits until the page asked for ahead has failed (or 10 s).
    serve_first_page(ex, [&] {
      if (first_pages == 1)
        failed_ahead = next_page_failed.wait_for(10s) == std::future_status::ready;
    });
  });

  delta_recorder rec;
  CHECK(sync_two_pages(server, rec, finished));
  CHECK(failed_ahead);
  CHECK(next_pages >= 2);                    // the failed page was asked again
  CHECK(rec.state().count("d/stale0") == 0); // nothing of the broken page was taken as listed
  CHECK(rec.out_of_order().empty());
}
