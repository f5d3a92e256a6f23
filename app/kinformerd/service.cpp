#include "app/kinformerd/service.hpp"

#include "actors/actor_system_setup.hpp"
#include "actors/cache.hpp"
#include "actors/controller/leader_elector.hpp"
#include "actors/error_bridge.hpp"
#include "actors/foreign_thread_scope.hpp"
#include "actors/remote_gateway.hpp"
#include "actors/remote_setup.hpp"
#include "app/apiserver/http_server.hpp"
#include "app/kinformerd/health.hpp"
#include "app/kinformerd/leader_only_handlers.hpp"
#include "app/kinformerd/log_handler.hpp"
#include "app/kinformerd/metrics.hpp"
#include "app/kinformerd/read_api.hpp"
#include "app/kinformerd/server_reach.hpp"
#include "app/kinformerd/service_log.hpp"
#include "app/kinformerd/simulated_cluster.hpp"
#include "app/kinformerd/webhook_handler.hpp"
#include "protocol/backoff.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/rest_mapper.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace kinformer::service {

namespace {

using namespace std::chrono_literals;

std::string seconds_text(std::chrono::duration<double> d) {
  std::ostringstream out;
  out.precision(3);
  out << std::fixed << d.count() << "s";
  return out.str();
}

result<std::string> read_secret_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return error{errc::not_found, "cannot read " + path};
  std::stringstream text;
  text << in.rdbuf();
  auto secret = text.str();
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r'))
    secret.pop_back();
  return secret;
}

// Asks the cache for its stats from a thread that is not an actor (an HTTP I/O thread) without
// blocking it: a short-lived actor makes the request and calls `done` with the answer, or with
// nothing when the cache does not answer in time.
void with_cache_stats(caf::actor_system& system, const cache_actor& cache,
                      std::function<void(std::optional<cache_stats>)> done) {
  foreign_thread_scope any_thread;
  system.spawn([cache, done = std::move(done)](caf::event_based_actor* self) {
    self->request(cache, 5s, atoms::stats_atom::value)
        .then([done](const cache_stats& stats) { done(stats); },
              [done](const caf::error&) { done(std::nullopt); });
  });
}

// The informer events worth a log line (design: one line per event that matters).
std::shared_ptr<const informer_observer> make_observer(service_log& log) {
  auto observer = std::make_shared<informer_observer>();
  observer->on_report = [&log](const informer_config& informer, const reflector_report& r) {
    auto name = informer.display_name();
    switch (r.kind) {
    case reflector_report::what::list_started:
      if (r.reason != restart_reason::initial)
        log.info("relist", {{"informer", name}, {"reason", to_string(r.reason)}});
      break;
    case reflector_report::what::list_completed:
      log.info("list_done", {{"informer", name}, {"took", seconds_text(r.duration)}});
      break;
    case reflector_report::what::watch_started:
      log.debug("watch_started", {{"informer", name}, {"reason", to_string(r.reason)}});
      break;
    case reflector_report::what::watch_ended:
      log.info("watch_restarted",
               {{"informer", name}, {"reason", to_string(r.reason)}, {"detail", r.detail}});
      break;
    case reflector_report::what::retry_scheduled:
      log.warn("retry", {{"informer", name},
                         {"reason", to_string(r.reason)},
                         {"delay", seconds_text(r.duration)},
                         {"detail", r.detail}});
      break;
    }
  };
  observer->on_overflow = [&log](const informer_config& informer, const std::string& subscription) {
    log.warn("handler_overflow", {{"informer", informer.display_name()},
                                  {"subscription", subscription},
                                  {"note", "deltas of the same object now coalesce"}});
  };
  return observer;
}

// Who this replica is in an election: the configured identity, else $POD_NAME (the downward
// API), else the host name.
std::string election_identity(const leader_election_options& election) {
  if (!election.identity.empty())
    return election.identity;
  if (const char* pod = std::getenv("POD_NAME"); pod && *pod)
    return pod;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

// Where the Lease lives: the configured namespace, else the pod's own, else "default".
std::string election_namespace(const leader_election_options& election) {
  if (!election.lease_namespace.empty())
    return election.lease_namespace;
  std::ifstream in(std::string(default_service_account_dir) + "/namespace");
  std::string ns;
  if (in && std::getline(in, ns) && !ns.empty())
    return ns;
  return "default";
}

// Informer names a handler attaches to; empty = all.
bool attaches_to(const std::vector<std::string>& names, const informer_options& informer) {
  if (names.empty())
    return true;
  auto name = informer.name.empty() ? informer.resource : informer.name;
  return std::find(names.begin(), names.end(), name) != names.end();
}

} // namespace

struct kinformerd::impl {
  service_config config;
  service_log log;
  cluster_simulator simulate;
  std::unique_ptr<simulated_cluster> simulated; // --simulate
  std::shared_ptr<api_client> client;
  caf::actor_system_config actor_config;
  std::unique_ptr<caf::actor_system> system;
  cache_actor cache;
  std::vector<caf::actor> handlers;
  std::optional<leader_elector_actor> elector;
  std::vector<std::pair<std::string, std::shared_ptr<const webhook_counters>>> webhooks;
  std::shared_ptr<service_metrics> metrics = std::make_shared<service_metrics>();
  std::unique_ptr<apiserver::http_server> metrics_server;
  std::unique_ptr<apiserver::http_server> api_server;
  std::unique_ptr<read_api> api;
  std::atomic<bool> api_serving{false}; // api and api_server are set (read by /metrics)
  std::atomic<bool> handlers_up{false}; // webhooks is filled in (read by /metrics)
  std::mutex waiting_mutex;
  std::string waiting; // why start-up has not reached the API server yet ("": it has)
  gateway_actor gateway;
  std::uint16_t remote_port = 0;
  caf::actor ticker;
  bool started = false;

  impl(service_config c, std::ostream& out, cluster_simulator simulator)
      : config(std::move(c)), log(out, config.level), simulate(std::move(simulator)) {}

  status_result start(const kinformerd::retry_wait& wait);
  void stop();
  result<connection_config> connect();
  status_result reach_api_server(read_api_options& served, const kinformerd::retry_wait& wait);
  void set_waiting(std::string why);
  std::string waiting_reason();
  // Starts the configured informers; fills in what the read API serves from them.
  status_result start_informers(read_api_options& served);
  status_result start_handlers();
  status_result start_webhooks(std::vector<webhook_plan> plans);
  status_result start_leader_election(std::vector<webhook_plan> plans);
  void release_leadership();
  status_result start_metrics_server();
  status_result start_api_server(read_api_options served);
  status_result start_remote();
  void start_ticker();
};

result<connection_config> kinformerd::impl::connect() {
  if (config.cluster.mode != connection_mode::simulate)
    return load_connection(config.cluster);
  if (!simulate)
    return make_error(errc::invalid_argument, "this kinformerd was built without the simulator");
  auto cluster = simulate(config.simulate, log);
  if (!cluster)
    return std::move(cluster).err();
  simulated = std::move(cluster).value();
  return from_server_url(simulated->url());
}

status_result kinformerd::impl::start_informers(read_api_options& served) {
  // Resolve every configured kind first: a typo fails start-up with the server's own names.
  rest_mapper mapper([this](const std::string& path) { return client->get_document_sync(path); });
  caf::scoped_actor self{*system};
  for (const auto& informer : config.informers) {
    auto mapping = mapper.resource_for(informer.resource);
    if (!mapping)
      return error{mapping.err().code,
                   "informer " + informer.resource + ": " + mapping.err().message};
    // One discovery entry per kind, whichever forms of it are configured.
    const auto key = mapping->resource.to_string();
    auto [forms, fresh] =
        served.forms.try_emplace(key, read_api_options::stored_forms{false, false});
    if (fresh)
      served.resources.push_back(
          served_resource(mapping->resource, mapping->kind.kind, mapping->scope));
    if (informer.metadata_only.value_or(config.defaults.metadata_only))
      forms->second.metadata = true;
    else
      forms->second.full = true;
    std::optional<error> failure;
    self->request(cache, 60s, atoms::get_informer_atom::value,
                  to_kind_request(informer, config.defaults))
        .receive(
            [&](const informer_set& set) {
              log.info("informer_started", {{"resource", informer.resource},
                                            {"informers", std::to_string(set.size())}});
            },
            [&](caf::error& err) { failure = from_caf_error(err); });
    if (failure)
      return error{failure->code, "informer " + informer.resource + ": " + failure->message};
  }
  return ok_v;
}

status_result kinformerd::impl::start_handlers() {
  std::vector<webhook_plan> plans;
  for (const auto& options : config.handlers.log) {
    for (const auto& informer : config.informers) {
      if (!attaches_to(options.informers, informer))
        continue;
      kinformer::log_handler_options handler;
      handler.name = options.name;
      handler.format = options.format == log_format::json ? kinformer::log_format::json
                                                          : kinformer::log_format::logfmt;
      handler.sink = stream_sink(std::cout);
      subscription_options subscription;
      subscription.name = options.name + ":" + informer.resource;
      handlers.push_back(caf::actor_cast<caf::actor>(
          spawn_log_handler(*system, cache, to_kind_request(informer, config.defaults),
                            std::move(handler), subscription)));
    }
  }
  for (const auto& options : config.handlers.webhooks) {
    for (const auto& informer : config.informers) {
      if (!attaches_to(options.informers, informer))
        continue;
      webhook_options hook;
      hook.url = options.url;
      hook.name = options.name + ":" + informer.resource;
      hook.max_batch = options.batch_size;
      hook.flush_interval = options.flush_interval;
      hook.queue_bound = options.queue_bound;
      hook.max_attempts = options.max_retries + 1;
      hook.retry.cap = options.max_backoff;
      if (!options.bearer_token_file.empty()) {
        auto token = read_secret_file(options.bearer_token_file);
        if (!token)
          return error{errc::invalid_argument,
                       "handlers.webhooks." + options.name + ": " + token.err().message};
        hook.headers.emplace_back("Authorization", "Bearer " + *token);
      }
      hook.tls.ca_file = options.certificate_authority;
      hook.tls.client_cert_file = options.client_certificate;
      hook.tls.client_key_file = options.client_key;
      hook.tls.insecure_skip_verify = options.insecure_skip_tls_verify;
      hook.counters = std::make_shared<webhook_counters>();
      auto subscription = webhook_subscription(hook);
      webhooks.emplace_back(hook.name, hook.counters);
      plans.push_back(
          {std::move(hook), to_kind_request(informer, config.defaults), std::move(subscription)});
    }
  }
  if (!config.leader_election.enabled)
    return start_webhooks(std::move(plans));
  return start_leader_election(std::move(plans));
}

status_result kinformerd::impl::start_webhooks(std::vector<webhook_plan> plans) {
  caf::scoped_actor self{*system};
  for (auto& plan : plans) {
    auto spawned = spawn_webhook_handler(*system, plan.hook);
    if (!spawned)
      return error{spawned.err().code,
                   "handlers.webhooks." + plan.hook.name + ": " + spawned.err().message};
    handlers.push_back(caf::actor_cast<caf::actor>(spawned->actor));
    std::optional<error> failure;
    self->request(cache, 60s, atoms::subscribe_atom::value, plan.kind, spawned->actor,
                  plan.subscription)
        .receive([](subscription_id) {}, [&](caf::error& err) { failure = from_caf_error(err); });
    if (failure)
      return *failure;
  }
  return ok_v;
}

// Webhooks run while this replica leads; the elector tells the actor that runs them.
status_result kinformerd::impl::start_leader_election(std::vector<webhook_plan> plans) {
  // A webhook that cannot work (its URL, its TLS files) fails start-up, leader or not.
  for (const auto& plan : plans) {
    auto probe = spawn_webhook_handler(*system, plan.hook);
    if (!probe)
      return error{probe.err().code,
                   "handlers.webhooks." + plan.hook.name + ": " + probe.err().message};
    caf::anon_send_exit(probe->actor, caf::exit_reason::user_shutdown);
  }
  const auto& election = config.leader_election;
  leader_elector_options options;
  options.lease_name = election.lease_name;
  options.lease_namespace = election_namespace(election);
  options.identity = election_identity(election);
  options.timings = {election.lease_duration, election.renew_deadline, election.retry_period};
  const std::string lease = options.lease_namespace + "/" + options.lease_name;
  metrics->set_leading(lease, false);

  leader_only_options gated;
  gated.webhooks = std::move(plans);
  gated.report = [this, lease, identity = options.identity](const std::string& event,
                                                            const std::string& detail) {
    if (event == "leading" || event == "not_leading")
      metrics->set_leading(lease, event == "leading");
    log.info(event, {{"lease", lease}, {"identity", identity}, {"detail", detail}});
  };
  auto gate = spawn_leader_only_handlers(*system, cache, std::move(gated));
  handlers.push_back(gate);
  elector = spawn_leader_elector(*system, client, options, gate);
  log.info("leader_election_started", {{"lease", lease},
                                       {"identity", options.identity},
                                       {"lease_duration", seconds_text(election.lease_duration)}});
  return ok_v;
}

// On a clean stop the Lease is handed on at once instead of expiring.
void kinformerd::impl::release_leadership() {
  if (!elector)
    return;
  caf::scoped_actor self{*system};
  self->request(*elector, 5s, atoms::release_atom::value)
      .receive(
          [this](bool released) {
            if (released)
              log.info("lease_released", {});
          },
          [this](caf::error& err) {
            log.warn("lease_release_failed", {{"error", from_caf_error(err).message}});
          });
  // Released or not (the API server may be gone), the elector stops campaigning.
  self->send_exit(*elector, caf::exit_reason::user_shutdown);
  elector.reset();
}

status_result kinformerd::impl::start_metrics_server() {
  if (config.listen.metrics.empty())
    return ok_v;
  apiserver::http_server_options options;
  options.listen = config.listen.metrics;
  metrics_server = std::make_unique<apiserver::http_server>(options);
  auto& sys = *system;
  auto c = cache;
  auto m = metrics;
  metrics_server->add_route(
      "/metrics", [this, &sys, c, m](const apiserver::http_request&,
                                     std::shared_ptr<apiserver::http_exchange> ex) {
        // The metrics server stops before the read API is torn down.
        if (api_serving.load(std::memory_order_acquire))
          m->update(api->stats(), api_server->stats());
        decltype(webhooks) hooks;
        if (handlers_up.load(std::memory_order_acquire))
          hooks = webhooks;
        with_cache_stats(sys, c, [m, hooks, ex](std::optional<cache_stats> stats) {
          if (stats)
            m->update(*stats);
          for (const auto& [name, counters] : hooks)
            m->update(name, counters->snapshot());
          apiserver::http_response response;
          response.content_type = "text/plain; version=0.0.4; charset=utf-8";
          response.body = m->render();
          ex->respond(std::move(response));
        });
      });
  auto probe = [this, &sys, c](bool ready) {
    return [this, &sys, c, ready](const apiserver::http_request&,
                                  std::shared_ptr<apiserver::http_exchange> ex) {
      with_cache_stats(sys, c, [ready, waiting = waiting_reason(), ex](auto stats) {
        auto answer = ready ? readiness(stats, waiting) : liveness(stats);
        apiserver::http_response response;
        response.status = answer.status;
        response.content_type = "text/plain; charset=utf-8";
        response.body = std::move(answer.body);
        ex->respond(std::move(response));
      });
    };
  };
  metrics_server->add_route("/healthz", probe(false));
  metrics_server->add_route("/livez", probe(false));
  metrics_server->add_route("/readyz", probe(true));
  if (auto started = metrics_server->start(); !started)
    return error{started.err().code, "listen.metrics: " + started.err().message};
  auto address = metrics_server->local_endpoint();
  log.info("metrics_listening", {{"address", address},
                                 {"metrics", "http://" + address + "/metrics"},
                                 {"healthz", "http://" + address + "/healthz"},
                                 {"readyz", "http://" + address + "/readyz"}});
  return ok_v;
}

status_result kinformerd::impl::start_api_server(read_api_options served) {
  if (config.listen.api.empty())
    return ok_v;
  apiserver::http_server_options options;
  options.listen = config.listen.api;
  if (!config.listen.api_token_file.empty()) {
    auto token = read_secret_file(config.listen.api_token_file);
    if (!token)
      return error{errc::invalid_argument, "listen.api_token_file: " + token.err().message};
    options.bearer_token = *token;
  } else {
    // TokenReview and SubjectAccessReview against the cluster, as kube-rbac-proxy does.
    access_options access;
    access.anonymous =
        config.listen.api_anonymous.value_or(config.cluster.mode == connection_mode::simulate);
    access.subject_access_review = config.listen.api_authorization == "subjectaccessreview";
    served.access = std::make_shared<api_access>(client, access);
    if (access.anonymous)
      log.warn("read_api_anonymous",
               {{"detail", "requests without a token read the read API unchecked "
                           "(listen.api_anonymous; on by default only with the simulator)"}});
  }
  options.tls_certificate_file = config.listen.api_tls_certificate;
  options.tls_key_file = config.listen.api_tls_key;
  options.max_connections = config.listen.api_max_connections;
  options.stream_write_timeout = std::chrono::seconds(config.listen.api_write_timeout_seconds);
  served.max_watches = config.listen.api_max_watches;
  served.max_unpaged_lists = config.listen.api_max_unpaged_lists;
  api_server = std::make_unique<apiserver::http_server>(options);
  api = std::make_unique<read_api>(*system, cache, std::move(served));
  api->attach(*api_server);
  if (auto started = api_server->start(); !started)
    return error{started.err().code, "listen.api: " + started.err().message};
  api_serving.store(true, std::memory_order_release); // /metrics may read them from now on
  log.info("api_listening",
           {{"address", api_server->local_endpoint()},
            {"try", std::string("kubectl --server=") +
                        (config.listen.api_tls_certificate.empty() ? "http://" : "https://") +
                        api_server->local_endpoint() + " get pods -A"}});
  return ok_v;
}

status_result kinformerd::impl::start_remote() {
  if (!config.remote)
    return ok_v;
  const auto& remote = *config.remote;
  std::string secret;
  if (!remote.shared_secret_file.empty()) {
    auto read = read_secret_file(remote.shared_secret_file);
    if (!read)
      return error{errc::invalid_argument, "remote.shared_secret_file: " + read.err().message};
    secret = *read;
  }
  gateway = spawn_remote_gateway(*system, cache, std::move(secret));
  auto published = publish_gateway(*system, gateway, remote.host, remote.port, !remote.plaintext);
  if (!published)
    return error{published.err().code, "remote: " + published.err().message};
  remote_port = *published;
  log.info("remote_listening",
           {{"port", std::to_string(remote_port)},
            {"tls", remote.plaintext ? "off" : "on"},
            {"shared_secret", remote.shared_secret_file.empty() ? "no" : "yes"}});
  return ok_v;
}

// In simulate mode, a line every few seconds so that a person watching sees the cache work.
void kinformerd::impl::start_ticker() {
  auto& l = log;
  auto metrics_url = metrics_server ? "http://" + metrics_server->local_endpoint() + "/metrics"
                                    : std::string("off");
  ticker = system->spawn([c = cache, &l, metrics_url](caf::event_based_actor* self) {
    auto last_events = std::make_shared<std::uint64_t>(0);
    self->send(self, atoms::timer_atom::value);
    return caf::behavior{[self, c, &l, metrics_url, last_events](atoms::timer_atom) {
      self->request(c, 5s, atoms::stats_atom::value)
          .then(
              [&l, metrics_url, last_events](const cache_stats& stats) {
                std::size_t objects = 0;
                std::uint64_t events = 0;
                bool synced = true;
                for (const auto& i : stats.informers) {
                  objects += i.stats.objects;
                  events += i.stats.events_added + i.stats.events_modified + i.stats.events_deleted;
                  synced = synced && i.stats.synced;
                }
                l.info("summary", {{"informers", std::to_string(stats.informers.size())},
                                   {"synced", synced ? "true" : "false"},
                                   {"objects", std::to_string(objects)},
                                   {"events", std::to_string(events)},
                                   {"events_since_last", std::to_string(events - *last_events)},
                                   {"metrics", metrics_url}});
                *last_events = events;
              },
              [](const caf::error&) {});
      self->delayed_send(self, 5s, atoms::timer_atom::value);
    }};
  });
}

void kinformerd::impl::set_waiting(std::string why) {
  std::lock_guard lock(waiting_mutex);
  waiting = std::move(why);
}

std::string kinformerd::impl::waiting_reason() {
  std::lock_guard lock(waiting_mutex);
  return waiting;
}

// Starts the informers once the API server answers. While it is away, retries with client-go's
// backoff, logs each attempt and keeps /readyz not ready with the reason.
status_result kinformerd::impl::reach_api_server(read_api_options& served,
                                                 const kinformerd::retry_wait& wait) {
  backoff delays;
  for (int attempt = 1;; ++attempt) {
    auto reached = reach_from_version(client->get_sync("/version"));
    if (reached.outcome == reach_outcome::what::answered) {
      served = {};
      auto started = start_informers(served);
      if (started) {
        if (attempt > 1)
          log.info("api_server_reached", {{"attempts", std::to_string(attempt)}});
        set_waiting({});
        return ok_v;
      }
      reached = reach_from_failure(started.err());
      if (reached.outcome == reach_outcome::what::refused)
        return started;
    }
    if (reached.outcome == reach_outcome::what::refused)
      return *reached.failure;
    const auto delay = delays.next_delay(watch_clock::now());
    set_waiting(reached.failure->message);
    log.warn("api_server_unreachable", {{"error", reached.failure->message},
                                        {"attempt", std::to_string(attempt)},
                                        {"retry_in", seconds_text(delay)}});
    const bool stop_asked = wait ? wait(delay) : (std::this_thread::sleep_for(delay), false);
    if (stop_asked)
      return make_error(errc::cancelled, "stopped before the API server answered");
  }
}

status_result kinformerd::impl::start(const kinformerd::retry_wait& wait) {
  auto connection = connect();
  if (!connection)
    return std::move(connection).err();
  log.info("connecting", {{"mode", std::string(to_string(*config.cluster.mode))},
                          {"server", connection->server}});
  client_options client_settings;
  client_settings.on_request = [m = metrics](const request_record& r) {
    m->count_api_request(to_string(r.verb), r.http_status,
                         std::chrono::duration<double>(r.duration));
  };
  auto created = api_client::create(*connection, client_settings);
  if (!created)
    return std::move(created).err();
  client = std::move(created).value();

  configure_actor_system(actor_config);
  remote_tls tls;
  if (config.remote) {
    tls = {config.remote->certificate_file, config.remote->key_file, config.remote->ca_file};
    configure_remote(actor_config, config.remote->plaintext ? nullptr : &tls);
  }
  system = std::make_unique<caf::actor_system>(actor_config);

  auto options = to_cache_options(config);
  options.observer = make_observer(log);
  cache = spawn_cache(*system, client, std::move(options));

  // The probes answer while start-up waits for the API server.
  set_waiting("not asked yet");
  if (auto s = start_metrics_server(); !s)
    return s;
  read_api_options served;
  if (auto s = reach_api_server(served, wait); !s)
    return s;
  if (auto s = start_handlers(); !s)
    return s;
  handlers_up.store(true, std::memory_order_release);
  if (auto s = start_api_server(std::move(served)); !s)
    return s;
  if (auto s = start_remote(); !s)
    return s;
  if (simulated)
    start_ticker();
  started = true;
  log.info("started", {{"informers", std::to_string(config.informers.size())},
                       {"handlers", std::to_string(handlers.size())}});
  return ok_v;
}

void kinformerd::impl::stop() {
  // Stop taking requests first, then let handlers drain, then stop the informers.
  if (api_server)
    api_server->stop();
  if (metrics_server)
    metrics_server->stop();
  if (simulated)
    simulated->stop_churn();
  if (system) {
    if (ticker)
      caf::anon_send_exit(ticker, caf::exit_reason::user_shutdown);
    if (gateway)
      caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    release_leadership();
    {
      // Handlers flush what they hold (webhooks: their last POST) before they terminate.
      caf::scoped_actor self{*system};
      for (auto& h : handlers)
        self->send_exit(h, caf::exit_reason::user_shutdown);
      self->wait_for(handlers);
    }
    handlers.clear();
    if (cache)
      caf::anon_send_exit(cache, caf::exit_reason::user_shutdown);
    api.reset();
    system.reset(); // waits for every actor to finish
  }
  api_server.reset();
  metrics_server.reset();
  client.reset();
  simulated.reset();
  if (started)
    log.info("stopped");
  started = false;
}

kinformerd::kinformerd(service_config config, std::ostream& log, cluster_simulator simulate)
    : impl_(std::make_unique<impl>(std::move(config), log, std::move(simulate))) {}

kinformerd::~kinformerd() {
  stop();
}

status_result kinformerd::start(retry_wait wait) {
  auto started = impl_->start(wait);
  if (!started)
    impl_->stop();
  return started;
}

void kinformerd::stop() {
  impl_->stop();
}

std::string kinformerd::metrics_address() const {
  return impl_->metrics_server ? impl_->metrics_server->local_endpoint() : "";
}

std::string kinformerd::api_address() const {
  return impl_->api_server ? impl_->api_server->local_endpoint() : "";
}

std::uint16_t kinformerd::remote_port() const {
  return impl_->remote_port;
}

} // namespace kinformer::service
