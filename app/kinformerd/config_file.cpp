// The YAML config file (deploy/kinformerd.yaml documents it), read with yaml-cpp.
//
// Reading is strict: unknown and duplicate keys are errors, scalars must have the right type,
// and every error carries "file:line: field.path: what". yaml-cpp and the readers below throw;
// parse_config_text turns every exception into an error value.

#include "app/kinformerd/config.hpp"

#include "protocol/quoted.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

namespace kinformer::service {

namespace {

// A problem at a place in the document.
struct config_problem {
  YAML::Mark mark;
  std::string message;
};

[[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& what) {
  throw config_problem{at.Mark(), field + ": " + what};
}

std::string scalar(const YAML::Node& node, const std::string& field) {
  if (node.IsNull())
    fail(node, field, "missing value");
  if (!node.IsScalar())
    fail(node, field, "must be a single value, not a list or map");
  return node.Scalar();
}

template <class Number>
Number number(const YAML::Node& node, const std::string& field, std::string_view what) {
  const std::string text = scalar(node, field);
  Number value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    fail(node, field, quoted(text) + " is not " + std::string(what));
  return value;
}

std::size_t count(const YAML::Node& node, const std::string& field) {
  return number<std::size_t>(node, field, "a non-negative integer");
}

bool boolean(const YAML::Node& node, const std::string& field) {
  const std::string text = scalar(node, field);
  if (text == "true")
    return true;
  if (text == "false")
    return false;
  fail(node, field, quoted(text) + " is not true or false");
}

std::chrono::milliseconds duration(const YAML::Node& node, const std::string& field) {
  auto parsed = parse_duration(scalar(node, field));
  if (!parsed)
    fail(node, field, parsed.err().message);
  return *parsed;
}

std::vector<std::string> string_list(const YAML::Node& node, const std::string& field) {
  if (!node.IsSequence())
    fail(node, field, "must be a list");
  std::vector<std::string> values;
  for (std::size_t i = 0; i < node.size(); ++i)
    values.push_back(scalar(node[i], field + "[" + std::to_string(i) + "]"));
  return values;
}

template <class Selector>
Selector selector(const YAML::Node& node, const std::string& field) {
  auto parsed = Selector::parse(scalar(node, field));
  if (!parsed)
    fail(node, field, parsed.err().message);
  return std::move(parsed).value();
}

// A map's keys, checked against the ones its section knows. `node` may be null (absent
// section): then every lookup finds nothing.
class section {
public:
  section(const YAML::Node& node, std::string field, std::initializer_list<std::string_view> known)
      : node_(node), field_(std::move(field)) {
    if (node_.IsNull())
      return;
    if (!node_.IsMap())
      fail(node_, field_.empty() ? "top level" : field_, "must be a map of keys");
    std::set<std::string> seen;
    for (const auto& entry : node_) {
      const std::string key = scalar(entry.first, field_);
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (auto k : known)
          list += (list.empty() ? "" : ", ") + std::string(k);
        fail(entry.first, child(key), "unknown key (known: " + list + ")");
      }
      if (!seen.insert(key).second)
        fail(entry.first, child(key), "duplicate key");
    }
  }

  // The value at `key`; a null node when absent.
  YAML::Node operator[](const std::string& key) const {
    // yaml-cpp's lookup of an absent key gives an invalid node that throws when inspected.
    if (!has(key))
      return YAML::Node(YAML::NodeType::Null);
    return node_[key];
  }
  bool has(const std::string& key) const { return !node_.IsNull() && node_[key].IsDefined(); }
  std::string child(const std::string& key) const {
    return field_.empty() ? key : field_ + "." + key;
  }
  [[noreturn]] void missing(const std::string& key) const { fail(node_, child(key), "missing"); }

  // Reads `key` into `target` with `read` when the key is present.
  template <class T, class Reader>
  void read(const std::string& key, T& target, Reader read) const {
    if (has(key))
      target = read((*this)[key], child(key));
  }

private:
  YAML::Node node_;
  std::string field_;
};

transform_options read_transform(const YAML::Node& node, const std::string& field) {
  const section s(node, field, {"drop_managed_fields", "drop_annotations"});
  transform_options transform;
  s.read("drop_managed_fields", transform.drop_managed_fields, boolean);
  s.read("drop_annotations", transform.drop_annotations, string_list);
  return transform;
}

cluster_options read_cluster(const YAML::Node& node) {
  const section s(node, "cluster",
                  {"mode", "server", "token_file", "certificate_authority",
                   "insecure_skip_tls_verify", "kubeconfig", "context"});
  cluster_options cluster;
  if (s.has("mode")) {
    const std::string mode = scalar(s["mode"], "cluster.mode");
    for (auto m : {connection_mode::in_cluster, connection_mode::kubeconfig,
                   connection_mode::server, connection_mode::simulate})
      if (mode == to_string(m))
        cluster.mode = m;
    if (!cluster.mode)
      fail(s["mode"], "cluster.mode",
           quoted(mode) + " is not a mode (in-cluster, kubeconfig, server, simulate)");
  }
  s.read("server", cluster.server, scalar);
  s.read("token_file", cluster.token_file, scalar);
  s.read("certificate_authority", cluster.certificate_authority, scalar);
  s.read("insecure_skip_tls_verify", cluster.insecure_skip_tls_verify, boolean);
  s.read("kubeconfig", cluster.kubeconfig, scalar);
  s.read("context", cluster.context, scalar);
  return cluster;
}

informer_options read_informer(const YAML::Node& node, const std::string& field) {
  const section s(node, field,
                  {"name", "resource", "namespaces", "label_selector", "field_selector",
                   "metadata_only", "compress_objects", "transform", "resync_period"});
  informer_options informer;
  if (!s.has("resource"))
    s.missing("resource");
  informer.resource = scalar(s["resource"], s.child("resource"));
  if (auto valid = check_resource_name(informer.resource); !valid)
    fail(s["resource"], s.child("resource"), valid.err().message);
  s.read("name", informer.name, scalar);
  if (informer.name.empty())
    informer.name = informer.resource;
  s.read("namespaces", informer.namespaces, string_list);
  s.read("label_selector", informer.labels, selector<label_selector>);
  s.read("field_selector", informer.fields, selector<field_selector>);
  s.read("metadata_only", informer.metadata_only, boolean);
  s.read("compress_objects", informer.compress_objects, boolean);
  s.read("transform", informer.transform, read_transform);
  s.read("resync_period", informer.resync_period, duration);
  return informer;
}

cache_defaults read_defaults(const YAML::Node& node) {
  const section s(node, "defaults",
                  {"namespaces", "label_selector", "field_selector", "metadata_only",
                   "compress_objects", "transform", "resync_period", "fail_on_missing_informer"});
  cache_defaults defaults;
  s.read("namespaces", defaults.namespaces, string_list);
  s.read("label_selector", defaults.labels, selector<label_selector>);
  s.read("field_selector", defaults.fields, selector<field_selector>);
  s.read("metadata_only", defaults.metadata_only, boolean);
  s.read("compress_objects", defaults.compress_objects, boolean);
  s.read("transform", defaults.transform, read_transform);
  s.read("resync_period", defaults.resync_period, duration);
  s.read("fail_on_missing_informer", defaults.fail_on_missing_informer, boolean);
  return defaults;
}

// "log", "log-1", "log-2": a default name unique among handlers of one type.
std::string default_name(std::string_view type, std::size_t index) {
  return index == 0 ? std::string(type) : std::string(type) + "-" + std::to_string(index);
}

log_handler_options read_log_handler(const YAML::Node& node, const std::string& field,
                                     std::size_t index) {
  const section s(node, field, {"name", "level", "format", "informers"});
  log_handler_options handler;
  handler.name = default_name("log", index);
  s.read("name", handler.name, scalar);
  if (s.has("level")) {
    auto level = parse_log_level(scalar(s["level"], s.child("level")));
    if (!level)
      fail(s["level"], s.child("level"), level.err().message);
    handler.level = *level;
  }
  if (s.has("format")) {
    auto format = parse_log_format(scalar(s["format"], s.child("format")));
    if (!format)
      fail(s["format"], s.child("format"), format.err().message);
    handler.format = *format;
  }
  s.read("informers", handler.informers, string_list);
  return handler;
}

webhook_handler_options read_webhook(const YAML::Node& node, const std::string& field,
                                     std::size_t index) {
  const section s(node, field,
                  {"name", "url", "batch_size", "flush_interval", "max_retries", "max_backoff",
                   "queue_bound", "bearer_token_file", "certificate_authority",
                   "client_certificate", "client_key", "insecure_skip_tls_verify", "informers"});
  webhook_handler_options hook;
  hook.name = default_name("webhook", index);
  s.read("name", hook.name, scalar);
  if (!s.has("url"))
    s.missing("url");
  s.read("url", hook.url, scalar);
  s.read("batch_size", hook.batch_size, count);
  s.read("flush_interval", hook.flush_interval, duration);
  s.read("max_retries", hook.max_retries, [](const YAML::Node& n, const std::string& f) {
    return number<unsigned>(n, f, "a non-negative integer");
  });
  s.read("max_backoff", hook.max_backoff, duration);
  s.read("queue_bound", hook.queue_bound, count);
  s.read("bearer_token_file", hook.bearer_token_file, scalar);
  s.read("certificate_authority", hook.certificate_authority, scalar);
  s.read("client_certificate", hook.client_certificate, scalar);
  s.read("client_key", hook.client_key, scalar);
  s.read("insecure_skip_tls_verify", hook.insecure_skip_tls_verify, boolean);
  s.read("informers", hook.informers, string_list);
  return hook;
}

template <class T, class Reader>
std::vector<T> read_list(const YAML::Node& node, const std::string& field, Reader read) {
  if (node.IsNull())
    return {};
  if (!node.IsSequence())
    fail(node, field, "must be a list");
  std::vector<T> items;
  for (std::size_t i = 0; i < node.size(); ++i)
    items.push_back(read(node[i], field + "[" + std::to_string(i) + "]", i));
  return items;
}

handlers_options read_handlers(const YAML::Node& node) {
  const section s(node, "handlers", {"log", "webhooks"});
  handlers_options handlers;
  handlers.log = read_list<log_handler_options>(s["log"], "handlers.log", read_log_handler);
  handlers.webhooks =
      read_list<webhook_handler_options>(s["webhooks"], "handlers.webhooks", read_webhook);
  return handlers;
}

listen_options read_listen(const YAML::Node& node) {
  const section s(node, "listen",
                  {"api", "metrics", "api_token_file", "api_max_connections", "api_max_watches",
                   "api_max_unpaged_lists", "api_write_timeout_seconds", "api_authorization",
                   "api_anonymous", "api_tls"});
  listen_options listen;
  // Addresses are checked here too, so the error points at the line. The read API may be off.
  auto address = [](bool may_be_off) {
    return [may_be_off](const YAML::Node& n, const std::string& field) {
      std::string text = may_be_off && n.IsScalar() && n.Scalar().empty() ? "" : scalar(n, field);
      if (!text.empty() || !may_be_off)
        if (auto valid = check_listen_address(text); !valid)
          fail(n, field, valid.err().message);
      return text;
    };
  };
  s.read("api", listen.api, address(true));
  s.read("metrics", listen.metrics, address(false));
  s.read("api_token_file", listen.api_token_file, scalar);
  s.read("api_authorization", listen.api_authorization, scalar);
  if (s.has("api_tls")) {
    const section tls(s["api_tls"], "listen.api_tls", {"certificate", "key"});
    tls.read("certificate", listen.api_tls_certificate, scalar);
    tls.read("key", listen.api_tls_key, scalar);
  }
  if (s.has("api_anonymous"))
    listen.api_anonymous = boolean(s["api_anonymous"], "listen.api_anonymous");
  s.read("api_max_connections", listen.api_max_connections, count);
  s.read("api_max_watches", listen.api_max_watches, count);
  s.read("api_max_unpaged_lists", listen.api_max_unpaged_lists, count);
  s.read("api_write_timeout_seconds", listen.api_write_timeout_seconds,
         [](const YAML::Node& n, const std::string& f) {
           auto seconds = count(n, f);
           if (seconds == 0)
             fail(n, f, "must be at least 1");
           return seconds;
         });
  return listen;
}

remote_options read_remote(const YAML::Node& node) {
  const section s(node, "remote", {"port", "host", "tls", "shared_secret_file", "plaintext"});
  remote_options remote;
  s.read("port", remote.port, [](const YAML::Node& n, const std::string& f) {
    return number<std::uint16_t>(n, f, "a port (0 to 65535)");
  });
  s.read("host", remote.host, scalar);
  if (s.has("tls")) {
    const section tls(s["tls"], "remote.tls", {"certificate", "key", "ca"});
    tls.read("certificate", remote.certificate_file, scalar);
    tls.read("key", remote.key_file, scalar);
    tls.read("ca", remote.ca_file, scalar);
  }
  s.read("shared_secret_file", remote.shared_secret_file, scalar);
  s.read("plaintext", remote.plaintext, boolean);
  return remote;
}

leader_election_options read_leader_election(const YAML::Node& node) {
  const section s(node, "leader_election",
                  {"enabled", "lease_name", "lease_namespace", "identity", "lease_duration",
                   "renew_deadline", "retry_period"});
  leader_election_options election;
  s.read("enabled", election.enabled, boolean);
  s.read("lease_name", election.lease_name, scalar);
  s.read("lease_namespace", election.lease_namespace, scalar);
  s.read("identity", election.identity, scalar);
  s.read("lease_duration", election.lease_duration, duration);
  s.read("renew_deadline", election.renew_deadline, duration);
  s.read("retry_period", election.retry_period, duration);
  return election;
}

simulate_options read_simulate(const YAML::Node& node) {
  const section s(node, "simulate", {"pods", "namespaces", "pod_bytes", "seed", "churn_rate"});
  simulate_options simulate;
  s.read("pods", simulate.pods, count);
  s.read("namespaces", simulate.namespaces, count);
  s.read("pod_bytes", simulate.pod_bytes, count);
  s.read("seed", simulate.seed, [](const YAML::Node& n, const std::string& f) {
    return number<std::uint64_t>(n, f, "a non-negative integer");
  });
  s.read("churn_rate", simulate.churn_rate, [](const YAML::Node& n, const std::string& f) {
    return number<double>(n, f, "a number");
  });
  return simulate;
}

service_config read_document(const YAML::Node& root) {
  const section s(root, "",
                  {"cluster", "informers", "defaults", "handlers", "listen", "remote", "log_level",
                   "simulate", "leader_election"});
  service_config config;
  config.cluster = read_cluster(s["cluster"]);
  config.informers = read_list<informer_options>(
      s["informers"], "informers",
      [](const YAML::Node& n, const std::string& f, std::size_t) { return read_informer(n, f); });
  config.defaults = read_defaults(s["defaults"]);
  config.handlers = read_handlers(s["handlers"]);
  config.listen = read_listen(s["listen"]);
  if (s.has("remote"))
    config.remote = read_remote(s["remote"]);
  if (s.has("log_level")) {
    auto level = parse_log_level(scalar(s["log_level"], "log_level"));
    if (!level)
      fail(s["log_level"], "log_level", level.err().message);
    config.level = *level;
  }
  config.simulate = read_simulate(s["simulate"]);
  config.leader_election = read_leader_election(s["leader_election"]);
  return config;
}

} // namespace

result<service_config> parse_config_text(std::string_view yaml_text, std::string_view source) {
  const std::string where(source);
  try {
    auto config = read_document(YAML::Load(std::string(yaml_text)));
    if (auto valid = check_config(config); !valid)
      return make_error(errc::invalid_argument, where + ": " + valid.err().message);
    return config;
  } catch (const config_problem& problem) {
    return make_error(errc::invalid_argument,
                      where + ":" + std::to_string(problem.mark.line + 1) + ": " + problem.message);
  } catch (const YAML::Exception& e) {
    // Syntax errors: yaml-cpp's message already says "yaml-cpp: error at line L, column C: ...".
    return make_error(errc::invalid_argument, where + ": not valid YAML: " + e.what());
  }
}

result<service_config> load_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(errc::not_found, "config file " + quoted(path) + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config_text(text.str(), path);
}

} // namespace kinformer::service
