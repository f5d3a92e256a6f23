// Remote subscribers: a handler in another actor system (as in another process) subscribes to
// the cache through the published gateway over CAF's network layer, in plaintext and over mutual
// TLS, and converges exactly as a local handler does.

#include "actors/actor_system_setup.hpp"
#include "actors/cache.hpp"
#include "actors/remote_gateway.hpp"
#include "actors/remote_setup.hpp"
#include "actors/remote_subscriber.hpp"
#include "app/kubesim/self_signed_cert.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/support/delta_recorder.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::delta_recorder;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};

std::string config_map(const std::string& ns, const std::string& name, const std::string& app) {
  boost::json::object obj{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", app}}}}},
      {"data", {{"value", "v"}}}};
  return boost::json::serialize(obj);
}

// PEM files for both nodes: one CA, one leaf valid as server and client.
struct tls_files {
  std::filesystem::path dir;
  remote_tls tls;

  tls_files() {
    sim::certificate_request request;
    request.client_auth = true;
    auto material = sim::make_self_signed_tls(request);
    REQUIRE(material.ok());
    static int made = 0;
    dir = std::filesystem::temp_directory_path() /
          ("kinformer-remote-test-" + std::to_string(::getpid()) + "-" + std::to_string(made++));
    std::filesystem::create_directories(dir);
    tls.ca_file = write("ca.pem", material->ca_cert_pem);
    tls.certificate_file = write("cert.pem", material->server_cert_pem);
    tls.key_file = write("key.pem", material->server_key_pem);
  }
  ~tls_files() { std::filesystem::remove_all(dir); }

  std::string write(const std::string& name, const std::string& text) {
    auto path = dir / name;
    std::ofstream(path) << text;
    return path.string();
  }
};

// The service's side: simulator, cache and published gateway in one actor system.
struct service_side {
  sim::simulator server{quiet()};
  std::shared_ptr<api_client> client;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  cache_actor cache;
  gateway_actor gateway;
  std::uint16_t port = 0;

  service_side(const remote_tls* tls, std::string secret) {
    REQUIRE(server.start().ok());
    auto created = api_client::create(*from_server_url(server.url()));
    REQUIRE(created.ok());
    client = std::move(created).value();
    configure_actor_system(cfg);
    configure_remote(cfg, tls);
    system = std::make_unique<caf::actor_system>(cfg);
    cache = spawn_cache(*system, client, cache_options{});
    gateway = spawn_remote_gateway(*system, cache, std::move(secret));
    auto published = publish_gateway(*system, gateway, "127.0.0.1", 0, tls != nullptr);
    REQUIRE(published.ok());
    port = *published;
  }
  ~service_side() {
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(cache, caf::exit_reason::user_shutdown);
    system.reset();
    client.reset();
    server.stop();
  }

  static sim::simulator_options quiet() {
    sim::simulator_options o;
    o.bookmark_interval = 200ms;
    return o;
  }

  void create(const std::string& ns, const std::string& name, const std::string& app = "web") {
    REQUIRE(server.store().create(configmaps, ns, config_map(ns, name, app)).ok());
  }

  // The simulator's truth in `ns`, as key -> resourceVersion, leaving out `excluded` keys.
  std::map<std::string, std::string> truth(const std::string& ns,
                                           const std::set<std::string>& excluded = {}) {
    std::map<std::string, std::string> out;
    for (auto& v : server.store().truth(configmaps))
      if (v.key.starts_with(ns + "/") && !excluded.contains(v.key))
        out[v.key] = std::to_string(v.resource_version);
    return out;
  }

  // Whether the cache's subscription count reaches `n` within 2 s. A gateway learns of a
  // subscriber's going from a message: the stats are polled until then.
  bool subscriptions_become(std::size_t n) {
    for (int i = 0; i < 200 && subscriptions() != n; ++i) {
      caf::scoped_actor self{*system};
      self->receive(caf::after(10ms) >> [] {});
    }
    return subscriptions() == n;
  }

  std::size_t subscriptions() {
    caf::scoped_actor self{*system};
    std::size_t total = 0;
    self->request(cache, 10s, atoms::stats_atom::value)
        .receive(
            [&](const cache_stats& stats) {
              for (auto& i : stats.informers)
                total += i.stats.subscriptions;
            },
            [&](caf::error&) { FAIL("no cache stats"); });
    return total;
  }
};

// The subscriber's side: its own actor system, as another process would have.
struct subscriber_side {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  delta_recorder rec;
  std::vector<error> errors;
  std::mutex errors_mutex;

  explicit subscriber_side(const remote_tls* tls) {
    configure_actor_system(cfg);
    configure_remote(cfg, tls);
    system = std::make_unique<caf::actor_system>(cfg);
  }

  result<remote_subscription> subscribe(std::uint16_t port, bool tls,
                                        remote_subscription_request request) {
    remote_callbacks callbacks;
    callbacks.on_delta = [this](const delta& d) { rec.record(d); };
    callbacks.on_synced = [this] { rec.mark_synced(); };
    callbacks.on_error = [this](const error& err) {
      std::lock_guard lock(errors_mutex);
      errors.push_back(err);
      rec.poke();
    };
    return subscribe_remote(*system, "127.0.0.1", port, tls, std::move(request),
                            std::move(callbacks));
  }
};

remote_subscription_request configmaps_in(const std::string& ns, const std::string& selector,
                                          const std::string& secret) {
  remote_subscription_request request;
  request.resource = "configmaps";
  request.namespace_ = ns;
  request.label_selector = selector;
  request.secret = secret;
  request.name = "test";
  return request;
}

} // namespace

TEST_CASE("a remote subscriber gets its namespace's matching objects, then live changes") {
  service_side service(nullptr, "s3cret");
  service.create("team-a", "one");
  service.create("team-a", "other-app", "db");
  service.create("team-b", "two");
  subscriber_side subscriber(nullptr);
  auto sub =
      subscriber.subscribe(service.port, false, configmaps_in("team-a", "app=web", "s3cret"));
  REQUIRE(sub.ok());
  REQUIRE(subscriber.rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  CHECK(subscriber.rec.state_copy() == service.truth("team-a", {"team-a/other-app"}));
  for (auto& d : subscriber.rec.deltas_copy())
    CHECK(d.initial_list);

  // Live changes: an add, an update, a delete, and objects the filter must keep out.
  service.create("team-a", "three");
  service.create("team-b", "four");
  REQUIRE(service.server.store()
              .update(configmaps, "team-a", "one", config_map("team-a", "one", "web"))
              .ok());
  REQUIRE(service.server.store().remove(configmaps, "team-a", "three").ok());
  service.create("team-a", "five");
  auto expected = service.truth("team-a", {"team-a/other-app"});
  REQUIRE(subscriber.rec.wait_for([&](const delta_recorder& r) { return r.state() == expected; }));
  auto deltas = subscriber.rec.deltas_copy();
  CHECK(std::none_of(deltas.begin(), deltas.end(), [](const delta& d) {
    return d.object->meta().namespace_ != "team-a" || d.object->meta().label("app") != "web";
  }));
  CHECK(subscriber.rec.out_of_order().empty());
  CHECK(subscriber.rec.deleted() == std::vector<std::string>{"team-a/three"});
  unsubscribe_remote(*sub);
}

TEST_CASE("a remote subscriber sees objects enter and leave its selection, as a filtered watch "
          "shows them") {
  service_side service(nullptr, "");
  service.create("team-a", "one");
  service.create("team-a", "two");
  service.create("team-a", "three", "db");
  subscriber_side subscriber(nullptr);
  auto request = configmaps_in("", "app=web", "");
  request.field_selector = "metadata.name!=two";
  auto sub = subscriber.subscribe(service.port, false, request);
  REQUIRE(sub.ok());
  REQUIRE(subscriber.rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  CHECK(subscriber.rec.state_copy() == service.truth("team-a", {"team-a/two", "team-a/three"}));

  // "one" leaves the label selection: deleted, in its last matching state. "three" enters it:
  // added. Then "one" comes back, and leaves again by being deleted for good.
  auto& store = service.server.store();
  REQUIRE(store.update(configmaps, "team-a", "one", config_map("team-a", "one", "db")).ok());
  REQUIRE(store.update(configmaps, "team-a", "three", config_map("team-a", "three", "web")).ok());
  REQUIRE(subscriber.rec.wait_for([&](const delta_recorder& r) {
    return r.state() == service.truth("team-a", {"team-a/one", "team-a/two"});
  }));
  auto deltas = subscriber.rec.deltas_copy();
  REQUIRE(deltas.size() == 3);
  CHECK(deltas[1].type == delta_type::deleted);
  CHECK(deltas[1].object->meta().name == "one");
  CHECK(deltas[1].object->meta().label("app") == "web");
  CHECK(deltas[2].type == delta_type::added);
  CHECK(deltas[2].object->meta().name == "three");

  REQUIRE(store.update(configmaps, "team-a", "one", config_map("team-a", "one", "web")).ok());
  REQUIRE(store.update(configmaps, "team-a", "two", config_map("team-a", "two", "db")).ok());
  REQUIRE(store.remove(configmaps, "team-a", "three").ok());
  REQUIRE(subscriber.rec.wait_for([&](const delta_recorder& r) {
    return r.state() == service.truth("team-a", {"team-a/two", "team-a/three"});
  }));
  deltas = subscriber.rec.deltas_copy();
  REQUIRE(deltas.size() == 5);
  CHECK(deltas[3].type == delta_type::added);
  CHECK(deltas[4].type == delta_type::deleted);
  CHECK(deltas[4].object->meta().name == "three");
  CHECK(subscriber.rec.out_of_order().empty());
  unsubscribe_remote(*sub);
}

TEST_CASE("a remote subscription with the wrong secret is refused with a clear error") {
  service_side service(nullptr, "s3cret");
  subscriber_side subscriber(nullptr);
  auto sub = subscriber.subscribe(service.port, false, configmaps_in("", "", "guess"));
  REQUIRE_FALSE(sub.ok());
  CHECK(sub.err().code == errc::invalid_argument);
  CHECK_THAT(sub.err().message, Catch::Contains("wrong shared secret"));
}

TEST_CASE("a remote subscription with a bad label or field selector or an unknown kind fails "
          "clearly") {
  service_side service(nullptr, "");
  subscriber_side subscriber(nullptr);
  auto bad_selector = subscriber.subscribe(service.port, false, configmaps_in("", "app in (", ""));
  REQUIRE_FALSE(bad_selector.ok());
  CHECK_THAT(bad_selector.err().message, Catch::Contains("label selector"));
  auto request = configmaps_in("", "", "");
  request.field_selector = "metadata.name";
  auto bad_fields = subscriber.subscribe(service.port, false, request);
  REQUIRE_FALSE(bad_fields.ok());
  CHECK_THAT(bad_fields.err().message, Catch::Contains("field selector"));
  request.field_selector.clear();
  request.resource = "nosuchthings";
  auto unknown = subscriber.subscribe(service.port, false, request);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.err().code == errc::no_match);
}

TEST_CASE("a subscriber that goes away ends its subscription in the service") {
  service_side service(nullptr, "");
  service.create("team-a", "one");
  {
    subscriber_side subscriber(nullptr);
    auto sub = subscriber.subscribe(service.port, false, configmaps_in("", "", ""));
    REQUIRE(sub.ok());
    REQUIRE(subscriber.rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
    CHECK(service.subscriptions() == 1);
    // The subscriber dies without unsubscribing (as a crashed process would), then its actor
    // system shuts down and its connection closes.
    caf::anon_send_exit(sub->handler, caf::exit_reason::kill);
  }
  // The gateway learns of it through the handler's down message.
  CHECK(service.subscriptions_become(0));
}

TEST_CASE("over mutual TLS, a subscriber with the CA's certificate converges") {
  tls_files files;
  service_side service(&files.tls, "");
  service.create("team-a", "one");
  subscriber_side subscriber(&files.tls);
  auto sub = subscriber.subscribe(service.port, true, configmaps_in("team-a", "", ""));
  REQUIRE(sub.ok());
  service.create("team-a", "two");
  auto expected = service.truth("team-a");
  REQUIRE(subscriber.rec.wait_for(
      [&](const delta_recorder& r) { return r.synced() == 1 && r.state() == expected; }));
  unsubscribe_remote(*sub);
}

TEST_CASE("over TLS, a subscriber whose certificate another CA signed is refused") {
  tls_files files;
  service_side service(&files.tls, "");
  tls_files stranger; // its own CA, its own certificate
  subscriber_side subscriber(&stranger.tls);
  auto sub = subscriber.subscribe(service.port, true, configmaps_in("", "", ""));
  REQUIRE_FALSE(sub.ok());
  CHECK((sub.err().code == errc::io || sub.err().code == errc::tls));
}

TEST_CASE("only the subscriber that subscribed can unsubscribe") {
  service_side service(nullptr, "");
  service.create("team-a", "one");
  subscriber_side owner(nullptr);
  auto mine = owner.subscribe(service.port, false, configmaps_in("team-a", "", ""));
  REQUIRE(mine.ok());
  REQUIRE(owner.rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  subscriber_side other(nullptr);
  auto theirs = other.subscribe(service.port, false, configmaps_in("team-a", "", ""));
  REQUIRE(theirs.ok());
  REQUIRE(other.rec.wait_for([](const delta_recorder& r) { return r.synced() == 1; }));
  CHECK(service.subscriptions() == 2);

  // The other peer tries to end the owner's subscription: as its own handler, and anonymously.
  auto gateway = caf::actor_cast<gateway_actor>(theirs->gateway);
  caf::send_as(theirs->handler, gateway, atoms::unsubscribe_atom::value, mine->id);
  caf::anon_send(gateway, atoms::unsubscribe_atom::value, mine->id);
  // Then ends its own, which it may: once that has taken effect, the attempts before it have
  // been handled too (one connection, in order).
  unsubscribe_remote(*theirs);
  CHECK(service.subscriptions_become(1));

  // The owner's subscription is untouched: it still converges, and ends when the owner says.
  service.create("team-a", "two");
  auto expected = service.truth("team-a");
  REQUIRE(owner.rec.wait_for([&](const delta_recorder& r) { return r.state() == expected; }));
  unsubscribe_remote(*mine);
  CHECK(service.subscriptions_become(0));
}
