// kinformerd's configuration: value parsers, whole-config checks and the mapping onto the cache's
// options. The YAML file (config_file.cpp) and the flags (config_flags.cpp) both end here.

#include "app/kinformerd/config.hpp"

#include "protocol/quoted.hpp"
#include "protocol/transforms.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

namespace kinformer::service {

namespace {

error invalid(std::string message) {
  return make_error(errc::invalid_argument, std::move(message));
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// A host name or IPv4 literal: letters, digits, '.', '-', '_'.
bool is_host_name(std::string_view host) {
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

bool is_ipv6_literal(std::string_view host) {
  return !host.empty() && host.find(':') != std::string_view::npos &&
         std::all_of(host.begin(), host.end(), [](char c) {
           // Hex digits, ':' and '.', and a zone suffix such as "%eth0".
           return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '.' || c == '%';
         });
}

// Checks one handler's informer list against the configured informer names.
status_result check_attachments(const std::string& field, const std::vector<std::string>& names,
                                const std::map<std::string, std::size_t>& informers) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!informers.contains(names[i]))
      return invalid(field + ".informers[" + std::to_string(i) + "]: no informer is named " +
                     quoted(names[i]));
  return ok_v;
}

status_result check_handler_names(const handlers_options& handlers) {
  std::map<std::string, std::string> seen; // name -> field that used it first
  auto claim = [&](const std::string& name, const std::string& field) -> status_result {
    if (name.empty())
      return invalid(field + ".name: empty");
    auto [it, fresh] = seen.emplace(name, field);
    if (!fresh)
      return invalid(field + ".name: " + quoted(name) + " is already the name of " + it->second);
    return ok_v;
  };
  for (std::size_t i = 0; i < handlers.log.size(); ++i)
    if (auto r = claim(handlers.log[i].name, "handlers.log[" + std::to_string(i) + "]"); !r)
      return r;
  for (std::size_t i = 0; i < handlers.webhooks.size(); ++i)
    if (auto r = claim(handlers.webhooks[i].name, "handlers.webhooks[" + std::to_string(i) + "]");
        !r)
      return r;
  return ok_v;
}

status_result check_webhook(const std::string& field, const webhook_handler_options& hook) {
  if (hook.url.empty())
    return invalid(field + ".url: missing");
  if (!hook.url.starts_with("http://") && !hook.url.starts_with("https://"))
    return invalid(field + ".url: " + quoted(hook.url) + " is not an http:// or https:// URL");
  const bool tls_options = !hook.certificate_authority.empty() ||
                           !hook.client_certificate.empty() || !hook.client_key.empty() ||
                           hook.insecure_skip_tls_verify;
  if (tls_options && !hook.url.starts_with("https://"))
    return invalid(field + ": TLS options need an https:// url");
  if (hook.insecure_skip_tls_verify && !hook.certificate_authority.empty())
    return invalid(field + ": certificate_authority and insecure_skip_tls_verify exclude each "
                           "other");
  if (hook.client_certificate.empty() != hook.client_key.empty())
    return invalid(field + ": client_certificate and client_key go together");
  if (hook.batch_size == 0)
    return invalid(field + ".batch_size: must be at least 1");
  if (hook.queue_bound < hook.batch_size)
    return invalid(field + ".queue_bound: must be at least batch_size (" +
                   std::to_string(hook.batch_size) + ")");
  if (hook.flush_interval.count() <= 0)
    return invalid(field + ".flush_interval: must be more than 0");
  if (hook.max_backoff.count() <= 0)
    return invalid(field + ".max_backoff: must be more than 0");
  return ok_v;
}

status_result check_cluster(const cluster_options& cluster) {
  if (!cluster.server.empty() && !cluster.kubeconfig.empty())
    return invalid("cluster: server and kubeconfig exclude each other; give one");
  if (!cluster.mode)
    return ok_v;
  switch (*cluster.mode) {
  case connection_mode::server:
    if (cluster.server.empty())
      return invalid("cluster.server: missing (mode is server)");
    if (auto url = parse_server_url(cluster.server); !url)
      return invalid("cluster.server: " + url.err().message);
    break;
  case connection_mode::kubeconfig: // no file: KUBECONFIG's files or ~/.kube/config, as kubectl
    break;
  case connection_mode::in_cluster:
  case connection_mode::simulate:
    if (!cluster.server.empty())
      return invalid("cluster.server: not used in mode " + std::string(to_string(*cluster.mode)));
    if (!cluster.kubeconfig.empty())
      return invalid("cluster.kubeconfig: not used in mode " +
                     std::string(to_string(*cluster.mode)));
    break;
  }
  if (!cluster.context.empty() && cluster.mode != connection_mode::kubeconfig)
    return invalid("cluster.context: only used in mode kubeconfig");
  return ok_v;
}

status_result check_remote(const remote_options& remote) {
  const bool any_tls =
      !remote.certificate_file.empty() || !remote.key_file.empty() || !remote.ca_file.empty();
  if (remote.plaintext && any_tls)
    return invalid("remote.plaintext: true, but TLS files are given too; choose one");
  if (!remote.plaintext) {
    if (remote.certificate_file.empty())
      return invalid("remote.tls.certificate: missing (or set remote.plaintext: true to run "
                     "without TLS)");
    if (remote.key_file.empty())
      return invalid("remote.tls.key: missing");
    // Mutual TLS: without a CA neither side verifies the other, so a man in the middle would
    // read every delta and any shared secret. CAF 0.17 verifies peers only against a CA.
    if (remote.ca_file.empty())
      return invalid("remote.tls.ca: missing: without a CA neither side's certificate is "
                     "verified, and a man in the middle would read the deltas and any "
                     "shared_secret; give the CA that signs the subscribers' and this "
                     "service's certificates (mutual TLS), or set remote.plaintext: true on a "
                     "trusted network");
  }
  if (!remote.host.empty() && !is_host_name(remote.host) && !is_ipv6_literal(remote.host))
    return invalid("remote.host: " + quoted(remote.host) + " is not a host name or address");
  return ok_v;
}

} // namespace

std::string_view to_string(connection_mode mode) noexcept {
  switch (mode) {
  case connection_mode::in_cluster:
    return "in-cluster";
  case connection_mode::kubeconfig:
    return "kubeconfig";
  case connection_mode::server:
    return "server";
  case connection_mode::simulate:
    return "simulate";
  }
  return "?";
}

std::string_view to_string(log_level level) noexcept {
  switch (level) {
  case log_level::debug:
    return "debug";
  case log_level::info:
    return "info";
  case log_level::warn:
    return "warn";
  case log_level::error:
    return "error";
  }
  return "?";
}

std::string_view to_string(log_format format) noexcept {
  return format == log_format::json ? "json" : "logfmt";
}

result<log_level> parse_log_level(std::string_view text) {
  for (auto level : {log_level::debug, log_level::info, log_level::warn, log_level::error})
    if (text == to_string(level))
      return level;
  return invalid(quoted(text) + " is not a log level (debug, info, warn, error)");
}

result<log_format> parse_log_format(std::string_view text) {
  for (auto format : {log_format::logfmt, log_format::json})
    if (text == to_string(format))
      return format;
  return invalid(quoted(text) + " is not a log format (logfmt, json)");
}

std::optional<std::string> process_env(std::string_view name) {
  if (const char* value = std::getenv(std::string(name).c_str()))
    return std::string(value);
  return std::nullopt;
}

result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty())
    return invalid("empty duration");
  if (text == "0")
    return std::chrono::milliseconds{0};
  // Each unit in milliseconds; longest spelling first so "ms" is not read as "m".
  static constexpr std::pair<std::string_view, std::int64_t> units[] = {
      {"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
  std::int64_t total = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::int64_t amount = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), amount);
    if (ec != std::errc{} || amount < 0)
      return invalid(quoted(text) + " is not a duration (like 500ms, 30s, 10m, 1h, 1m30s)");
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    const auto unit = std::find_if(std::begin(units), std::end(units),
                                   [&](const auto& u) { return rest.starts_with(u.first); });
    if (unit == std::end(units))
      return invalid(quoted(text) + ": missing or unknown unit (ms, s, m, h)");
    rest.remove_prefix(unit->first.size());
    if (amount > (std::numeric_limits<std::int64_t>::max() - total) / unit->second)
      return invalid(quoted(text) + " is too long");
    total += amount * unit->second;
  }
  return std::chrono::milliseconds{total};
}

status_result check_listen_address(std::string_view address) {
  auto bad = [&](std::string_view why) {
    return invalid(quoted(address) + " is not host:port (" + std::string(why) + ")");
  };
  std::string_view host, port;
  if (address.starts_with('[')) {
    const auto close = address.find(']');
    if (close == std::string_view::npos || address.substr(close + 1, 1) != ":")
      return bad("an IPv6 host is written [addr]:port");
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    if (!is_ipv6_literal(host))
      return bad("bad IPv6 address");
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos)
      return bad("no port");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return bad("an IPv6 host is written [addr]:port");
    if (!is_host_name(host))
      return bad("bad host");
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value > 65535)
    return bad("port must be 0 to 65535");
  return ok_v;
}

status_result check_resource_name(std::string_view name) {
  if (name.empty())
    return invalid("empty resource name");
  const bool chars_ok = std::all_of(
      name.begin(), name.end(), [](char c) { return is_lower_alnum(c) || c == '.' || c == '-'; });
  if (!chars_ok || !is_lower_alnum(name.front()) || !is_lower_alnum(name.back()) ||
      name.find("..") != std::string_view::npos)
    return invalid(quoted(name) +
                   " is not a resource name (like pods, deployments.apps, widgets.example.com)");
  return ok_v;
}

// client-go's checks: the lease outlasts the renew deadline, which outlasts the retry period
// (by client-go's jitter factor 1.2), so a leader stops leading before others may take over.
status_result check_leader_election(const leader_election_options& election) {
  if (!election.enabled)
    return ok_v;
  if (election.lease_name.empty())
    return invalid("leader_election.lease_name: must not be empty");
  if (election.lease_duration < std::chrono::seconds(1))
    return invalid("leader_election.lease_duration: at least 1s (a Lease counts whole seconds)");
  if (election.lease_duration <= election.renew_deadline)
    return invalid("leader_election.lease_duration: must be greater than renew_deadline");
  if (election.retry_period.count() <= 0 ||
      election.renew_deadline.count() <= 1.2 * static_cast<double>(election.retry_period.count()))
    return invalid("leader_election.renew_deadline: must be greater than 1.2 x retry_period "
                   "(and retry_period positive)");
  return ok_v;
}

status_result check_config(const service_config& config) {
  if (auto r = check_cluster(config.cluster); !r)
    return r;

  std::map<std::string, std::size_t> names;                  // informer name -> index
  std::map<std::pair<std::string, bool>, std::size_t> kinds; // (resource, metadata) -> index
  for (std::size_t i = 0; i < config.informers.size(); ++i) {
    const auto& informer = config.informers[i];
    const std::string field = "informers[" + std::to_string(i) + "]";
    if (auto r = check_resource_name(informer.resource); !r)
      return invalid(field + ".resource: " + r.err().message);
    const bool metadata_only = informer.metadata_only.value_or(config.defaults.metadata_only);
    if (auto [it, fresh] = kinds.emplace(std::pair{informer.resource, metadata_only}, i); !fresh)
      return invalid(field + ".resource: " + quoted(informer.resource) +
                     " is already watched by informers[" + std::to_string(it->second) +
                     "] (give one of them metadata_only, or merge them)");
    if (auto [it, fresh] = names.emplace(informer.name, i); !fresh)
      return invalid(field + ".name: " + quoted(informer.name) +
                     " is already the name of informers[" + std::to_string(it->second) + "]");
    if (informer.resync_period && informer.resync_period->count() < 0)
      return invalid(field + ".resync_period: negative");
  }

  if (auto r = check_handler_names(config.handlers); !r)
    return r;
  for (std::size_t i = 0; i < config.handlers.log.size(); ++i)
    if (auto r = check_attachments("handlers.log[" + std::to_string(i) + "]",
                                   config.handlers.log[i].informers, names);
        !r)
      return r;
  for (std::size_t i = 0; i < config.handlers.webhooks.size(); ++i) {
    const std::string field = "handlers.webhooks[" + std::to_string(i) + "]";
    if (auto r = check_webhook(field, config.handlers.webhooks[i]); !r)
      return r;
    if (auto r = check_attachments(field, config.handlers.webhooks[i].informers, names); !r)
      return r;
  }

  if (!config.listen.api.empty())
    if (auto r = check_listen_address(config.listen.api); !r)
      return invalid("listen.api: " + r.err().message);
  if (config.listen.api_tls_certificate.empty() != config.listen.api_tls_key.empty())
    return invalid(std::string("listen.api_tls.") +
                   (config.listen.api_tls_key.empty() ? "key" : "certificate") +
                   ": missing (give both, or neither for plain HTTP)");
  if (config.listen.api_authorization != "subjectaccessreview" &&
      config.listen.api_authorization != "authenticated")
    return invalid("listen.api_authorization: " + quoted(config.listen.api_authorization) +
                   " is not subjectaccessreview or authenticated");
  if (config.listen.api_anonymous.value_or(false) && !config.listen.api_token_file.empty())
    return invalid("listen.api_anonymous: true, but api_token_file requires a token; choose one");
  if (auto r = check_listen_address(config.listen.metrics); !r)
    return invalid("listen.metrics: " + r.err().message);
  if (config.listen.api == config.listen.metrics && !config.listen.api.ends_with(":0"))
    return invalid("listen.metrics: " + quoted(config.listen.metrics) +
                   " is also listen.api; they need different ports");

  if (config.remote)
    if (auto r = check_remote(*config.remote); !r)
      return r;

  if (auto r = check_leader_election(config.leader_election); !r)
    return r;

  if (config.simulate.namespaces == 0)
    return invalid("simulate.namespaces: must be at least 1");
  if (!std::isfinite(config.simulate.churn_rate) || config.simulate.churn_rate < 0)
    return invalid("simulate.churn_rate: must be a finite number, 0 or more");
  return ok_v;
}

result<connection_mode> resolve_connection_mode(const cluster_options& cluster,
                                                const env_lookup& env) {
  if (cluster.mode)
    return *cluster.mode;
  // What the user named wins over what the environment offers.
  if (!cluster.kubeconfig.empty())
    return connection_mode::kubeconfig;
  if (!cluster.server.empty())
    return connection_mode::server;
  // As kubectl: the files KUBECONFIG lists, else ~/.kube/config, before the service account.
  if (!kubeconfig_search_paths(env("KUBECONFIG").value_or(""), env("HOME").value_or("")).empty())
    return connection_mode::kubeconfig;
  if (env("KUBERNETES_SERVICE_HOST") && env("KUBERNETES_SERVICE_PORT"))
    return connection_mode::in_cluster;
  return invalid("cluster: no API server given: use --server URL, --kubeconfig FILE or "
                 "--simulate (in a pod, the service account is used; KUBECONFIG and "
                 "~/.kube/config when present)");
}

result<connection_config> load_connection(const cluster_options& cluster) {
  auto mode = resolve_connection_mode(cluster);
  if (!mode)
    return std::move(mode).err();
  auto loaded = [&]() -> result<connection_config> {
    switch (*mode) {
    case connection_mode::in_cluster:
      return in_cluster_config();
    case connection_mode::kubeconfig:
      if (cluster.kubeconfig.empty()) { // from KUBECONFIG or ~/.kube/config, merged
        auto paths = kubeconfig_search_paths();
        if (paths.empty())
          return invalid("cluster: no kubeconfig file (KUBECONFIG names none that exists, and "
                         "there is no ~/.kube/config)");
        return load_kubeconfig(paths, cluster.context);
      }
      return load_kubeconfig(cluster.kubeconfig, cluster.context);
    case connection_mode::server:
      return from_server_url(cluster.server);
    case connection_mode::simulate:
      break;
    }
    return invalid("cluster: the simulator provides its own connection");
  }();
  if (!loaded)
    return loaded;
  connection_config& connection = loaded.value();
  if (!cluster.token_file.empty()) {
    connection.token.clear();
    connection.token_file = cluster.token_file;
  }
  if (!cluster.certificate_authority.empty()) {
    connection.ca_data.clear();
    connection.ca_file = cluster.certificate_authority;
  }
  if (cluster.insecure_skip_tls_verify)
    connection.insecure_skip_tls_verify = true;
  return loaded;
}

std::shared_ptr<const object_transform> make_transform(const transform_options& options) {
  return chain_transforms(
      {options.drop_managed_fields ? drop_managed_fields() : nullptr,
       options.drop_annotations.empty() ? nullptr : drop_annotations(options.drop_annotations)});
}

kind_request to_kind_request(const informer_options& informer, const cache_defaults& defaults) {
  kind_request kind;
  kind.resource = informer.resource;
  kind.metadata_only = informer.metadata_only.value_or(defaults.metadata_only);
  return kind;
}

cache_options to_cache_options(const service_config& config) {
  cache_options options;
  options.default_namespaces = config.defaults.namespaces;
  options.default_label_selector = config.defaults.labels;
  options.default_field_selector = config.defaults.fields;
  options.default_transform = make_transform(config.defaults.transform);
  options.compress_objects = config.defaults.compress_objects;
  options.sync_period = config.defaults.resync_period;
  options.reader_fail_on_missing_informer = config.defaults.fail_on_missing_informer;
  // The read API resumes watches from a list's resourceVersion: it needs recent deletions.
  options.change_window = read_api_change_window;
  for (const auto& informer : config.informers) {
    by_object_options entry;
    entry.kind = to_kind_request(informer, config.defaults);
    entry.namespaces = informer.namespaces;
    entry.labels = informer.labels;
    entry.fields = informer.fields;
    if (informer.transform)
      // An explicit "no transform" must not fall back to the default one.
      entry.transform = informer.transform->empty()
                            ? std::make_shared<const object_transform>([](boost::json::value&) {})
                            : make_transform(*informer.transform);
    entry.sync_period = informer.resync_period;
    entry.compress_objects = informer.compress_objects;
    options.by_object.push_back(std::move(entry));
  }
  return options;
}

} // namespace kinformer::service
