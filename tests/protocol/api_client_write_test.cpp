// api_client's writes on kept-alive connections: a request the server took and then dropped the
// connection on is sent again only when sending it twice is harmless (update, delete), never a
// create or a patch, which the server may have applied.

#include "protocol/http/api_client.hpp"
#include "tests/protocol/support/scripted_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

using namespace kinformer;
using kinformer::test::scripted_server;
using kinformer::test::server_exchange;

namespace {

// The server answers the first request, then drops the connection on the first write it reads
// and answers every later request.
struct dropping_server {
  std::atomic<int> writes{0};
  scripted_server server{[this](server_exchange& ex) {
    if (ex.request().method == "GET") {
      ex.respond(200, R"({"kind":"APIVersions"})");
      return;
    }
    if (writes.fetch_add(1) == 0) {
      ex.drop();
      return;
    }
    ex.respond(200, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})");
  }};

  std::unique_ptr<api_client> warmed_client() {
    auto client = api_client::create(*from_server_url(server.url()));
    REQUIRE(client.ok());
    // One answered GET leaves a kept-alive connection for the write to reuse.
    auto warm = (*client)->get_sync("/api");
    REQUIRE(warm.ok());
    return std::move(client).value();
  }
};

write_request write_of(api_verb verb) {
  write_request r;
  r.verb = verb;
  r.target = "/api/v1/namespaces/demo/configmaps/a";
  r.body = R"({"metadata":{"name":"a"}})";
  return r;
}

} // namespace

TEST_CASE("api client: a create dropped after it was sent on a kept-alive connection is not "
          "sent again") {
  for (auto verb : {api_verb::create, api_verb::patch}) {
    dropping_server s;
    auto client = s.warmed_client();
    auto answer = client->write_sync(write_of(verb));
    CHECK_FALSE(answer.ok());
    CHECK(s.writes == 1);
  }
}

TEST_CASE("api client: an update or delete dropped the same way is sent again on a fresh "
          "connection") {
  for (auto verb : {api_verb::update, api_verb::delete_}) {
    dropping_server s;
    auto client = s.warmed_client();
    auto answer = client->write_sync(write_of(verb));
    REQUIRE(answer.ok());
    CHECK(answer->status_code == 200);
    CHECK(s.writes == 2);
    CHECK(s.server.connection_count() == 2);
  }
}

// kube-apiserver closes kept-alive connections that stay idle: a create after that must not go
// out on the closed connection (where it would fail and could not be sent again) but on a fresh
// one. The read API's TokenReviews failed this way against a real server.
TEST_CASE("api client: a create after the server closed the idle connection goes out on a "
          "fresh one") {
  std::atomic<int> writes{0};
  scripted_server server{[&](server_exchange& ex) {
    if (ex.request().method == "GET") {
      ex.respond(200, R"({"kind":"APIVersions"})");
      ex.drop(); // the server's idle timeout, right after the answer
      return;
    }
    ++writes;
    ex.respond(201, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})");
  }};
  auto client = api_client::create(*from_server_url(server.url()));
  REQUIRE(client.ok());
  REQUIRE((*client)->get_sync("/api").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50)); // the close has arrived
  auto answer = (*client)->write_sync(write_of(api_verb::create));
  REQUIRE(answer.ok());
  CHECK(answer->status_code == 201);
  CHECK(writes == 1);
  CHECK(server.connection_count() == 2);
}
