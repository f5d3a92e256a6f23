// The built-in handlers: the log handler against a real informer on the simulator, the webhook
// handler against a local HTTP receiver (batching, retries with backoff, the queue bound,
// backpressure into the informer, draining on shutdown, HTTPS with and without client
// certificates).

#include "actors/actor_system_setup.hpp"
#include "actors/informer.hpp"
#include "app/kinformerd/log_handler.hpp"
#include "app/kinformerd/webhook_handler.hpp"
#include "app/kinformerd/webhook_sender.hpp"
#include "app/kubesim/self_signed_cert.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"
#include "protocol/http/api_client.hpp"
#include "tests/service/http_receiver.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <condition_variable>
#include <future>
#include <mutex>
#include <set>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::testing::http_receiver;
using kinformer::testing::receiver_tls;

namespace {

const group_version_resource configmaps{"", "v1", "configmaps"};

std::string config_map_json(const std::string& ns, const std::string& name,
                            const std::string& value, const std::string& rv = "") {
  boost::json::object meta{{"name", name}, {"namespace", ns}};
  if (!rv.empty())
    meta["resourceVersion"] = rv;
  boost::json::object obj{{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", meta},
                          {"data", {{"value", value}}}};
  return boost::json::serialize(obj);
}

object_ptr config_map(const std::string& name, int rv, const std::string& value = "v") {
  auto obj = object::parse(config_map_json("default", name, value, std::to_string(rv)));
  REQUIRE(obj.ok());
  return *obj;
}

delta make_delta(delta_type type, object_ptr obj, object_ptr old = nullptr) {
  delta d;
  d.type = type;
  d.object = std::move(obj);
  d.old_object = std::move(old);
  return d;
}

// `count` new config maps cm-0, cm-1, ... at resourceVersions first_rv, first_rv + 1, ...
delta_batch added_config_maps(int count, int first_rv) {
  delta_batch batch;
  for (int i = 0; i < count; ++i)
    batch.push_back(
        make_delta(delta_type::added, config_map("cm-" + std::to_string(i), first_rv + i)));
  return batch;
}

// Lines from a sink, with a wait.
struct line_collector {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> lines;

  line_sink sink() {
    return [this](std::string_view line) {
      std::lock_guard lock(mutex);
      lines.emplace_back(line);
      changed.notify_all();
    };
  }
  template <class Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [&] { return pred(lines); });
  }
};

struct actor_system_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  actor_system_fixture() {
    configure_actor_system(cfg);
    system = std::make_unique<caf::actor_system>(cfg);
  }
};

// A deliverer that plays the informer: sends batches to a handler and counts the acks.
struct fake_informer {
  caf::scoped_actor self;
  std::uint64_t acked = 0;
  static constexpr subscription_id id = 7;

  explicit fake_informer(caf::actor_system& sys) : self(sys) {}

  void deliver(const handler_actor& h, delta_batch batch) {
    self->send(h, atoms::deliver_atom::value, id, std::move(batch));
  }
  // Receives acknowledgements until `total` deltas are acknowledged.
  bool wait_acked(std::uint64_t total, std::chrono::milliseconds timeout = 10s) {
    bool timed_out = false;
    while (acked < total && !timed_out)
      self->receive(
          [&](atoms::ack_atom, subscription_id sub, std::uint64_t n) {
            CHECK(sub == id);
            acked += n;
          },
          caf::after(timeout) >> [&] { timed_out = true; });
    return acked >= total;
  }
};

std::vector<boost::json::value> parse_batch(const std::string& body) {
  boost::system::error_code ec;
  auto value = boost::json::parse(body, ec);
  REQUIRE_FALSE(ec);
  REQUIRE(value.is_array());
  return {value.as_array().begin(), value.as_array().end()};
}

webhook_options quick_webhook(const http_receiver& receiver) {
  webhook_options o;
  o.url = receiver.url();
  o.name = "test-hook";
  o.max_batch = 5;
  o.flush_interval = 50ms;
  o.retry.initial = 10ms;
  o.retry.cap = 40ms;
  o.request_timeout = 5s;
  o.drain_timeout = 5s;
  return o;
}

} // namespace

// ---------------------------------------------------------------- log handler

TEST_CASE("log lines as JSON carry the delta's identity and flags") {
  auto before = config_map("cm-1", 41);
  auto after = config_map("cm-1", 42);
  log_handler_options o;
  o.name = "audit";
  auto now = std::chrono::system_clock::time_point{} + 1714564800123ms; // 2024-05-01T12:00:00.123Z
  auto line = format_delta(make_delta(delta_type::updated, after, before), o, now);
  auto json = boost::json::parse(line).as_object();
  CHECK(json.at("ts") == "2024-05-01T12:00:00.123Z");
  CHECK(json.at("handler") == "audit");
  CHECK(json.at("event") == "delta");
  CHECK(json.at("type") == "updated");
  CHECK(json.at("kind") == "ConfigMap");
  CHECK(json.at("namespace") == "default");
  CHECK(json.at("name") == "cm-1");
  CHECK(json.at("resourceVersion") == "42");
  CHECK(json.at("oldResourceVersion") == "41");
  CHECK_FALSE(json.contains("initialList"));
  CHECK_FALSE(json.contains("object"));

  auto gone = make_delta(delta_type::deleted, after, after);
  gone.final_state_unknown = true;
  o.include_object = true;
  json = boost::json::parse(format_delta(gone, o, now)).as_object();
  CHECK(json.at("finalStateUnknown") == true);
  CHECK_FALSE(json.contains("oldResourceVersion"));
  CHECK(json.at("object").at("data").at("value") == "v");

  auto synced = boost::json::parse(format_synced(o, now)).as_object();
  CHECK(synced.at("event") == "synced");
}

TEST_CASE("log lines as logfmt quote what needs quoting") {
  log_handler_options o;
  o.name = "my handler";
  o.format = log_format::logfmt;
  auto now = std::chrono::system_clock::time_point{} + 1714564800123ms;
  auto d = make_delta(delta_type::added, config_map("cm-1", 5));
  d.initial_list = true;
  CHECK(format_delta(d, o, now) ==
        "ts=2024-05-01T12:00:00.123Z handler=\"my handler\" event=delta type=added kind=ConfigMap "
        "namespace=default name=cm-1 resourceVersion=5 initialList=true");
  o.name = "a\"b=c\\";
  CHECK(format_synced(o, now) ==
        "ts=2024-05-01T12:00:00.123Z handler=\"a\\\"b=c\\\\\" event=synced");
}

TEST_CASE("the log handler writes one line per delta of a real informer") {
  sim::simulator_options so;
  so.bookmark_interval = 200ms;
  sim::simulator server(so);
  REQUIRE(server.start().ok());
  auto client = api_client::create(*from_server_url(server.url()));
  REQUIRE(client.ok());
  for (int i = 0; i < 3; ++i)
    REQUIRE(server.store()
                .create(configmaps, "default",
                        config_map_json("default", "cm-" + std::to_string(i), "v"))
                .ok());
  // The client outlives the actor system: its I/O thread posts into the actors until it stops.
  std::shared_ptr<api_client> shared_client = std::move(*client);
  {
    actor_system_fixture f;
    informer_config c;
    c.resource = configmaps;
    c.kind = "ConfigMap";
    auto informer = spawn_informer(*f.system, shared_client, c);
    line_collector lines;
    log_handler_options o;
    o.format = log_format::json;
    o.sink = lines.sink();
    auto handler = spawn_log_handler(*f.system, informer, o);

    REQUIRE(lines.wait_for([](auto& l) { return l.size() == 4; }));
    std::set<std::string> names;
    for (int i = 0; i < 3; ++i) {
      auto json = boost::json::parse(lines.lines[i]).as_object();
      CHECK(json.at("type") == "added");
      CHECK(json.at("initialList") == true);
      names.insert(std::string(json.at("name").as_string()));
    }
    CHECK(names == std::set<std::string>{"cm-0", "cm-1", "cm-2"});
    CHECK(boost::json::parse(lines.lines[3]).at("event") == "synced");

    REQUIRE(server.store()
                .update(configmaps, "default", "cm-1", config_map_json("default", "cm-1", "w"))
                .ok());
    REQUIRE(server.store().remove(configmaps, "default", "cm-2").ok());
    REQUIRE(lines.wait_for([](auto& l) { return l.size() == 6; }));
    auto updated = boost::json::parse(lines.lines[4]).as_object();
    CHECK(updated.at("type") == "updated");
    CHECK(updated.at("name") == "cm-1");
    CHECK(updated.contains("oldResourceVersion"));
    auto deleted = boost::json::parse(lines.lines[5]).as_object();
    CHECK(deleted.at("type") == "deleted");
    CHECK(deleted.at("name") == "cm-2");

    caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(informer, caf::exit_reason::user_shutdown);
  }
  shared_client.reset();
  server.stop();
}

// ---------------------------------------------------------------- webhook

TEST_CASE("webhook URLs are parsed, and bad ones refused") {
  auto e = parse_webhook_url("http://127.0.0.1:8080/hooks/k8s?x=1");
  REQUIRE(e.ok());
  CHECK(e->host == "127.0.0.1");
  CHECK(e->port == "8080");
  CHECK(e->target == "/hooks/k8s?x=1");
  auto v6 = parse_webhook_url("http://[::1]:9000");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->target == "/");
  CHECK(parse_webhook_url("http://example.com")->port == "80");
  CHECK_FALSE(e->tls);
  auto secure = parse_webhook_url("https://example.com/k");
  REQUIRE(secure.ok());
  CHECK(secure->tls);
  CHECK(secure->port == "443");
  CHECK(secure->target == "/k");
  CHECK(parse_webhook_url("https://[::1]:8443")->port == "8443");
  for (auto bad : {"ftp://x", "http://", "https://", "http://:80/", "http://h:0/",
                   "http://h:99999/", "http://h:8x/", "http://[::1/", "http://[::1]x/"}) {
    INFO(bad);
    auto r = parse_webhook_url(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::invalid_argument);
  }
  actor_system_fixture f;
  webhook_options o;
  o.url = "not a url";
  CHECK_FALSE(spawn_webhook_handler(*f.system, o).ok());
}

TEST_CASE("the webhook batches by size, then flushes the rest after the interval") {
  http_receiver receiver;
  actor_system_fixture f;
  auto hook = spawn_webhook_handler(*f.system, quick_webhook(receiver));
  REQUIRE(hook.ok());
  fake_informer informer(*f.system);
  auto batch = added_config_maps(12, 100);
  informer.deliver(hook->actor, batch);

  REQUIRE(informer.wait_acked(12));
  auto requests = receiver.requests();
  REQUIRE(requests.size() == 3);
  std::vector<std::size_t> sizes;
  int next = 0;
  for (auto& r : requests) {
    CHECK(r.method == "POST");
    CHECK(r.target == "/hook");
    CHECK(r.content_type == "application/json");
    auto entries = parse_batch(r.body);
    sizes.push_back(entries.size());
    for (auto& e : entries) {
      // In delivery order, with identity and the whole object.
      CHECK(e.at("type") == "added");
      CHECK(e.at("key").as_string() == "default/cm-" + std::to_string(next));
      CHECK(e.at("resourceVersion").as_string() == std::to_string(100 + next));
      CHECK(e.at("object").at("metadata").at("name").as_string() == "cm-" + std::to_string(next));
      ++next;
    }
  }
  CHECK(sizes == std::vector<std::size_t>{5, 5, 2});
  auto stats = hook->counters->snapshot();
  CHECK(stats.received == 12);
  CHECK(stats.sent == 12);
  CHECK(stats.posts_ok == 3);
  CHECK(stats.queue_depth == 0);
  CHECK(stats.in_flight == 0);
  caf::anon_send_exit(hook->actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("the webhook retries a batch after 500s, backing off exponentially") {
  http_receiver receiver({500, 503, 500, 200});
  actor_system_fixture f;
  auto options = quick_webhook(receiver);
  options.include_objects = false;
  options.retry.initial = 20ms;
  options.retry.cap = 1s;
  options.jitter = [] { return 1.0; }; // every delay at its ceiling: 20, 40, 80 ms
  auto hook = spawn_webhook_handler(*f.system, options);
  REQUIRE(hook.ok());
  fake_informer informer(*f.system);
  delta_batch batch;
  for (int i = 0; i < 5; ++i)
    batch.push_back(make_delta(delta_type::updated, config_map("cm-" + std::to_string(i), 10 + i),
                               config_map("cm-" + std::to_string(i), 1)));
  informer.deliver(hook->actor, batch);

  // Nothing is acknowledged before the POST succeeds.
  REQUIRE(receiver.wait_for([](auto& r) { return r.size() >= 1; }));
  REQUIRE(informer.wait_acked(5));
  auto requests = receiver.requests();
  REQUIRE(requests.size() == 4);
  for (auto& r : requests)
    CHECK(r.body == requests[0].body); // the same batch, resent
  auto entries = parse_batch(requests[0].body);
  REQUIRE(entries.size() == 5);
  CHECK_FALSE(entries[0].as_object().contains("object"));
  CHECK(entries[0].at("type") == "updated");
  // The gaps grow: at least 20, 40 and 80 ms.
  CHECK(requests[1].at - requests[0].at >= 20ms);
  CHECK(requests[2].at - requests[1].at >= 40ms);
  CHECK(requests[3].at - requests[2].at >= 80ms);
  auto stats = hook->counters->snapshot();
  CHECK(stats.posts_failed == 3);
  CHECK(stats.retries == 3);
  CHECK(stats.posts_ok == 1);
  CHECK(stats.sent == 5);
  caf::anon_send_exit(hook->actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("the webhook gives up on a batch the endpoint refuses for good") {
  http_receiver receiver({400});
  actor_system_fixture f;
  auto hook = spawn_webhook_handler(*f.system, quick_webhook(receiver));
  REQUIRE(hook.ok());
  fake_informer informer(*f.system);
  informer.deliver(hook->actor, {make_delta(delta_type::added, config_map("cm-0", 1))});
  REQUIRE(informer.wait_acked(1));
  REQUIRE(receiver.requests().size() == 1);
  auto stats = hook->counters->snapshot();
  CHECK(stats.abandoned == 1);
  CHECK(stats.sent == 0);
  CHECK(stats.retries == 0);
  caf::anon_send_exit(hook->actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("the webhook queue coalesces by object and drops past its bound") {
  http_receiver receiver;
  receiver.hold(); // the first POST stays unanswered
  actor_system_fixture f;
  auto options = quick_webhook(receiver);
  options.max_batch = 2;
  options.queue_bound = 4;
  auto hook = spawn_webhook_handler(*f.system, options);
  REQUIRE(hook.ok());
  fake_informer informer(*f.system);
  // Ten new objects at once, ignoring the window: four fit, six are dropped (and acknowledged).
  auto batch = added_config_maps(10, 100);
  informer.deliver(hook->actor, batch);
  REQUIRE(informer.wait_acked(6));
  REQUIRE(receiver.wait_for([](auto& r) { return r.size() == 1; }));
  auto stats = hook->counters->snapshot();
  CHECK(stats.dropped == 6);
  CHECK(stats.in_flight == 2); // cm-0, cm-1 in the held POST
  CHECK(stats.queue_depth == 2);

  // cm-2 waits: its update folds into the waiting add; cm-3's delete cancels its add.
  informer.deliver(hook->actor, {make_delta(delta_type::updated, config_map("cm-2", 200, "new"),
                                            config_map("cm-2", 102)),
                                 make_delta(delta_type::deleted, config_map("cm-3", 103))});
  REQUIRE(informer.wait_acked(6 + 3)); // the update, and the add + delete pair
  stats = hook->counters->snapshot();
  CHECK(stats.coalesced == 3);
  CHECK(stats.queue_depth == 1);

  receiver.release();
  REQUIRE(informer.wait_acked(12)); // everything that was received has left the queue
  auto requests = receiver.requests();
  REQUIRE(requests.size() == 2);
  auto second = parse_batch(requests[1].body);
  REQUIRE(second.size() == 1);
  CHECK(second[0].at("type") == "added"); // still new to the receiver
  CHECK(second[0].at("key") == "default/cm-2");
  CHECK(second[0].at("resourceVersion") == "200");
  CHECK(second[0].at("object").at("data").at("value") == "new");
  caf::anon_send_exit(hook->actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("shutdown drains the webhook queue before the handler terminates") {
  http_receiver receiver({500});
  actor_system_fixture f;
  auto options = quick_webhook(receiver);
  options.max_batch = 100;
  options.flush_interval = 60s; // only the shutdown can flush
  auto hook = spawn_webhook_handler(*f.system, options);
  REQUIRE(hook.ok());
  fake_informer informer(*f.system);
  auto batch = added_config_maps(7, 1);
  informer.deliver(hook->actor, batch);
  informer.self->monitor(hook->actor);
  caf::anon_send_exit(hook->actor, caf::exit_reason::user_shutdown);

  bool down = false;
  informer.self->receive_while([&] { return !down; })(
      [&](atoms::ack_atom, subscription_id, std::uint64_t n) { informer.acked += n; },
      [&](const caf::down_msg& msg) {
        down = true;
        CHECK(msg.reason == caf::exit_reason::user_shutdown);
      },
      caf::after(10s) >> [&] { FAIL("the webhook handler did not terminate"); });
  // The failed first POST was retried during the drain; all seven arrived.
  auto requests = receiver.requests();
  REQUIRE(requests.size() == 2);
  CHECK(parse_batch(requests[1].body).size() == 7);
  CHECK(informer.acked == 7);
  CHECK(hook->counters->snapshot().sent == 7);
}

TEST_CASE("a webhook subscribed to an informer pushes back into the informer's queue") {
  sim::simulator_options so;
  so.bookmark_interval = 200ms;
  sim::simulator server(so);
  REQUIRE(server.start().ok());
  auto client = api_client::create(*from_server_url(server.url()));
  REQUIRE(client.ok());
  for (int i = 0; i < 40; ++i)
    REQUIRE(server.store()
                .create(configmaps, "default",
                        config_map_json("default", "cm-" + std::to_string(i), "v"))
                .ok());
  http_receiver receiver;
  receiver.hold();
  // The client outlives the actor system: its I/O thread posts into the actors until it stops.
  std::shared_ptr<api_client> shared_client = std::move(*client);
  {
    actor_system_fixture f;
    informer_config c;
    c.resource = configmaps;
    c.kind = "ConfigMap";
    auto informer = spawn_informer(*f.system, shared_client, c);
    auto options = quick_webhook(receiver);
    options.max_batch = 4;
    options.queue_bound = 8;
    auto hook = spawn_webhook_handler(*f.system, informer, options);
    REQUIRE(hook.ok());
    REQUIRE(receiver.wait_for([](auto& r) { return r.size() == 1; }));

    // The endpoint is stalled: the webhook holds at most its bound, the informer keeps the rest.
    // The first POST left after the first (and only) delivery, of the whole window.
    caf::scoped_actor self{*f.system};
    informer_stats stats;
    self->request(informer, caf::infinite, atoms::stats_atom::value)
        .receive([&](informer_stats s) { stats = std::move(s); },
                 [&](caf::error& err) { FAIL(f.system->render(err)); });
    REQUIRE(stats.synced);
    REQUIRE(stats.queues.size() == 1);
    CHECK(stats.queues[0].name == "test-hook");
    CHECK(stats.queues[0].depth == 40 - 8);
    auto w = hook->counters->snapshot();
    CHECK(w.queue_depth + w.in_flight == 8);
    CHECK(w.dropped == 0);

    receiver.release();
    std::set<std::string> keys;
    REQUIRE(receiver.wait_for([&](auto& requests) {
      keys.clear();
      for (auto& r : requests)
        for (auto& e : parse_batch(r.body))
          keys.insert(std::string(e.at("key").as_string()));
      return keys.size() == 40;
    }));
    CHECK(hook->counters->snapshot().dropped == 0);
    caf::anon_send_exit(hook->actor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(informer, caf::exit_reason::user_shutdown);
  }
  shared_client.reset();
  server.stop();
}

// ---------------------------------------------------------------- webhook over HTTPS

namespace {

sim::tls_material make_pki(sim::certificate_request request = {}) {
  auto material = sim::make_self_signed_tls(request);
  REQUIRE(material.ok());
  return *material;
}

// One POST through a sender, waited for.
post_outcome post_once(const std::string& url, tls_client_settings tls) {
  auto endpoint = parse_webhook_url(url);
  REQUIRE(endpoint.ok());
  auto sender = webhook_sender::create(*endpoint, 5s, {}, std::move(tls));
  REQUIRE(sender.ok());
  std::promise<post_outcome> done;
  auto outcome = done.get_future();
  (*sender)->post("[]", [&done](post_outcome o) { done.set_value(std::move(o)); });
  REQUIRE(outcome.wait_for(10s) == std::future_status::ready);
  return outcome.get();
}

} // namespace

TEST_CASE("an https webhook verifies the endpoint against the configured CA") {
  auto pki = make_pki();
  receiver_tls server{pki.server_cert_pem, pki.server_key_pem, {}};
  http_receiver receiver({}, &server);
  REQUIRE(receiver.url().starts_with("https://127.0.0.1:"));

  tls_client_settings trusted;
  trusted.ca_data = pki.ca_cert_pem;
  SECTION("by IP address") {
    auto outcome = post_once(receiver.url(), trusted);
    CHECK(outcome.error.empty());
    CHECK(outcome.status == 200);
  }
  SECTION("by host name (SNI and the DNS name in the certificate)") {
    auto url = receiver.url();
    url.replace(url.find("127.0.0.1"), 9, "localhost");
    auto outcome = post_once(url, trusted);
    CHECK(outcome.error.empty());
    CHECK(outcome.status == 200);
  }
  auto requests = receiver.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].body == "[]");
  CHECK(receiver.failed_handshakes() == 0);
}

TEST_CASE("an https webhook refuses an endpoint it cannot verify, and sends it nothing") {
  SECTION("a CA it does not trust (the system store has never heard of it)") {
    auto pki = make_pki();
    receiver_tls server{pki.server_cert_pem, pki.server_key_pem, {}};
    http_receiver receiver({}, &server);
    auto outcome = post_once(receiver.url(), {});
    CHECK(outcome.status == 0);
    CHECK_THAT(outcome.error, Catch::Contains("handshake") && Catch::Contains("certificate"));
    CHECK(outcome.retryable());
    CHECK(receiver.wait_for_failed_handshakes(1));
    CHECK(receiver.requests().empty());
  }
  SECTION("a certificate for another name") {
    sim::certificate_request other;
    other.dns_names = {"other.example"};
    other.ip_addresses = {};
    auto pki = make_pki(other);
    receiver_tls server{pki.server_cert_pem, pki.server_key_pem, {}};
    http_receiver receiver({}, &server);
    tls_client_settings trusted;
    trusted.ca_data = pki.ca_cert_pem;
    auto outcome = post_once(receiver.url(), trusted);
    CHECK(outcome.status == 0);
    CHECK_THAT(outcome.error, Catch::Contains("certificate"));
    CHECK(receiver.requests().empty());
  }
}

TEST_CASE("insecure_skip_tls_verify posts to any https endpoint") {
  auto pki = make_pki();
  receiver_tls server{pki.server_cert_pem, pki.server_key_pem, {}};
  http_receiver receiver({}, &server);
  tls_client_settings insecure;
  insecure.insecure_skip_verify = true;
  auto outcome = post_once(receiver.url(), insecure);
  CHECK(outcome.status == 200);
  CHECK(receiver.requests().size() == 1);
}

TEST_CASE("an https webhook presents its client certificate when the endpoint asks") {
  sim::certificate_request both_ends;
  both_ends.client_auth = true;
  auto pki = make_pki(both_ends);
  receiver_tls server{pki.server_cert_pem, pki.server_key_pem, pki.ca_cert_pem};
  http_receiver receiver({}, &server);
  tls_client_settings settings;
  settings.ca_data = pki.ca_cert_pem;
  SECTION("with one") {
    settings.client_cert_data = pki.server_cert_pem;
    settings.client_key_data = pki.server_key_pem;
    auto outcome = post_once(receiver.url(), settings);
    CHECK(outcome.status == 200);
    auto requests = receiver.requests();
    REQUIRE(requests.size() == 1);
    CHECK_FALSE(requests[0].client_subject.empty());
  }
  SECTION("without one, the endpoint refuses the connection") {
    auto outcome = post_once(receiver.url(), settings);
    CHECK(outcome.status == 0);
    CHECK_FALSE(outcome.error.empty());
    CHECK(receiver.requests().empty());
  }
}

TEST_CASE("unreadable TLS material fails the webhook at spawn, naming the file") {
  actor_system_fixture f;
  webhook_options o;
  o.url = "https://127.0.0.1:1/hook";
  o.tls.ca_file = "/nonexistent/ca.crt";
  auto hook = spawn_webhook_handler(*f.system, o);
  REQUIRE_FALSE(hook.ok());
  CHECK(hook.err().code == errc::tls);
  CHECK_THAT(hook.err().message, Catch::Contains("/nonexistent/ca.crt"));
  o.tls = {};
  o.tls.client_cert_file = "/nonexistent/client.crt";
  auto bad_cert = spawn_webhook_handler(*f.system, o);
  REQUIRE_FALSE(bad_cert.ok());
  CHECK_THAT(bad_cert.err().message, Catch::Contains("/nonexistent/client.crt"));
}

TEST_CASE("the webhook handler delivers batches to an https endpoint") {
  auto pki = make_pki();
  receiver_tls server{pki.server_cert_pem, pki.server_key_pem, {}};
  http_receiver receiver({}, &server);
  actor_system_fixture f;
  auto options = quick_webhook(receiver);
  options.tls.ca_data = pki.ca_cert_pem;
  auto hook = spawn_webhook_handler(*f.system, options);
  REQUIRE(hook.ok());
  fake_informer informer(*f.system);
  auto batch = added_config_maps(7, 10);
  informer.deliver(hook->actor, batch);
  REQUIRE(informer.wait_acked(7));
  std::size_t entries = 0;
  for (auto& r : receiver.requests())
    entries += parse_batch(r.body).size();
  CHECK(entries == 7);
  CHECK(hook->counters->snapshot().sent == 7);
}
