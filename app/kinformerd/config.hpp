#pragma once
// kinformerd's configuration: plain data, read from a YAML file (deploy/kinformerd.yaml documents
// the format) and from command-line flags, validated as a whole. No CAF here.
//
// Every error names the field or flag it is about, for example
// `invalid_argument: config.yaml:12: informers[2].resource: missing` or
// `invalid_argument: --watch: missing value`. Unknown keys are errors, so a typo is never
// silently ignored.

#include "actors/cache_messages.hpp"
#include "protocol/kube_config.hpp"
#include "protocol/result.hpp"
#include "protocol/selector.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::service {

// How kinformerd reaches the API server.
enum class connection_mode {
  in_cluster, // the pod's service account (KUBERNETES_SERVICE_HOST/PORT)
  kubeconfig, // a kubeconfig file, at a context
  server,     // a bare URL, with optional token file and CA
  simulate,   // the embedded simulator, started in-process
};

std::string_view to_string(connection_mode mode) noexcept;

struct cluster_options {
  // Unset: chosen by resolve_connection_mode().
  std::optional<connection_mode> mode;
  std::string server;                // server mode: "https://host:port"
  std::string token_file;            // bearer token, re-read when it changes
  std::string certificate_authority; // PEM file of trusted CAs
  bool insecure_skip_tls_verify = false;
  std::string kubeconfig; // kubeconfig mode: the file...
  std::string context;    // ...and its context ("" = current-context)
};

// What is changed in every object before it is stored.
struct transform_options {
  bool drop_managed_fields = false;          // metadata.managedFields: about half of ObjectMeta
  std::vector<std::string> drop_annotations; // e.g. kubectl's last-applied-configuration

  bool empty() const { return !drop_managed_fields && drop_annotations.empty(); }
  bool operator==(const transform_options&) const = default;
};

// One informer to run. Unset optionals fall back to cache_defaults.
struct informer_options {
  std::string name;     // handlers refer to it; defaults to `resource`
  std::string resource; // kubectl-style: "pods", "deployments.apps", "widgets.example.com"
  std::optional<std::vector<std::string>> namespaces; // "" = all namespaces
  std::optional<label_selector> labels;
  std::optional<field_selector> fields;
  std::optional<bool> metadata_only;
  std::optional<bool> compress_objects;
  std::optional<transform_options> transform; // replaces the default transform, not merged
  std::optional<std::chrono::milliseconds> resync_period;
};

// Cache-wide settings (controller-runtime's cache.Options).
struct cache_defaults {
  std::vector<std::string> namespaces; // empty: all namespaces
  label_selector labels;
  field_selector fields;
  bool metadata_only = false;
  // Informers keep their objects' text compressed (actors/messages.hpp, compress_objects).
  // Unset: metadata-only informers do, the others keep it as received.
  std::optional<bool> compress_objects;
  transform_options transform;
  std::chrono::milliseconds resync_period{0}; // zero: no resync
  // Reads of a kind no informer serves fail instead of starting one.
  bool fail_on_missing_informer = false;
};

enum class log_level { debug, info, warn, error };
enum class log_format { logfmt, json };

std::string_view to_string(log_level level) noexcept;
std::string_view to_string(log_format format) noexcept;

// A built-in handler attaches to the informers it names; an empty list means all of them.
struct log_handler_options {
  std::string name;
  log_level level = log_level::info;
  log_format format = log_format::logfmt;
  std::vector<std::string> informers;
};

struct webhook_handler_options {
  std::string name;
  std::string url; // http:// or https://
  std::size_t batch_size = 100;
  std::chrono::milliseconds flush_interval{1000};
  unsigned max_retries = 5;
  std::chrono::milliseconds max_backoff{30000};
  std::size_t queue_bound = 10000;
  std::string bearer_token_file; // "" = no Authorization header
  // https:// only: the CA bundle to verify the endpoint with ("" = the system trust store), a
  // client certificate and key for endpoints that ask for one, or no verification at all.
  std::string certificate_authority;
  std::string client_certificate;
  std::string client_key;
  bool insecure_skip_tls_verify = false;
  std::vector<std::string> informers;
};

struct handlers_options {
  std::vector<log_handler_options> log;
  std::vector<webhook_handler_options> webhooks;
};

// "host:port" strings, already validated (IPv6 hosts in brackets); port 0 picks a free port.
struct listen_options {
  std::string api = "127.0.0.1:8080";     // the read API; "" turns it off
  std::string metrics = "127.0.0.1:9090"; // /metrics, /healthz, /readyz
  std::string api_token_file;             // "" = no bearer-token check on the read API
  // HTTPS for the read API: certificate chain and key (PEM). Both empty: plain HTTP.
  std::string api_tls_certificate;
  std::string api_tls_key;
  // The read API's bounds: past each, 429 with Retry-After (0: no bound); a stream whose client
  // does not take a write within the timeout is dropped.
  std::size_t api_max_connections = 1024;
  std::size_t api_max_watches = 512;
  std::size_t api_max_unpaged_lists = 8;
  std::size_t api_write_timeout_seconds = 30;
  // Who may read through the read API (app/kinformerd/api_access.hpp): without api_token_file,
  // bearer tokens are checked with TokenReview, and each request with a SubjectAccessReview
  // ("subjectaccessreview") or not at all ("authenticated": any authenticated user may read).
  std::string api_authorization = "subjectaccessreview";
  // Requests without a token are served unchecked. Default: only with the embedded simulator.
  std::optional<bool> api_anonymous;
};

// Where other processes subscribe (caf::io). TLS unless plaintext is asked for explicitly.
struct remote_options {
  std::uint16_t port = 0; // 0 picks a free port
  std::string host;       // "" = all interfaces
  std::string certificate_file;
  std::string key_file;
  std::string ca_file; // clients must present a certificate signed by it ("" = no client certs)
  std::string shared_secret_file;
  bool plaintext = false;
};

// Lease-based leader election among replicas (coordination.k8s.io/v1): handlers that act
// (webhooks) run on the leader only; informers, the read API and metrics run on every replica.
struct leader_election_options {
  bool enabled = false;
  std::string lease_name = "kinformerd";
  std::string lease_namespace; // "": the pod's namespace in a cluster, else "default"
  std::string identity;        // "": $POD_NAME, else the host name
  std::chrono::milliseconds lease_duration{15000}; // client-go's defaults
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

// The embedded simulator's load (connection_mode::simulate).
struct simulate_options {
  std::size_t pods = 2000;
  std::size_t namespaces = 10;
  std::size_t pod_bytes = 3500;
  std::uint64_t seed = 1;
  double churn_rate = 50; // pod writes per second; 0 = none
};

struct service_config {
  cluster_options cluster;
  std::vector<informer_options> informers;
  cache_defaults defaults;
  handlers_options handlers;
  listen_options listen;
  std::optional<remote_options> remote; // absent: no remote subscriptions
  leader_election_options leader_election;
  log_level level = log_level::info;
  simulate_options simulate;
  // --help was given: print command_line_help() and exit 0. Nothing else was parsed or checked.
  bool show_help = false;
  // --version was given: print the version and exit 0.
  bool show_version = false;
};

// Reads environment variables; tests pass their own.
using env_lookup = std::function<std::optional<std::string>(std::string_view name)>;
// The process environment.
std::optional<std::string> process_env(std::string_view name);

// Parses and validates a config file. The connection mode stays unset when the file gives none.
result<service_config> load_config_file(const std::string& path);
// The same for YAML text; `source` names it in errors (a file name).
result<service_config> parse_config_text(std::string_view yaml_text, std::string_view source);

// Parses kinformerd's flags; `--config FILE` is read first and the other flags override it.
// Resolves the connection mode from the environment and checks the whole result.
result<service_config> parse_command_line(int argc, const char* const* argv,
                                          const env_lookup& env = process_env);
// The --help text.
std::string_view command_line_help() noexcept;

// The mode when none was given: in-cluster when KUBERNETES_SERVICE_HOST and _PORT are set, else
// kubeconfig when a kubeconfig file is named, else server when a URL is given; an error if none.
result<connection_mode> resolve_connection_mode(const cluster_options& cluster,
                                                const env_lookup& env = process_env);

// The connection for in_cluster, kubeconfig and server modes (protocol/kube_config.hpp loads
// them); token_file, certificate_authority and insecure_skip_tls_verify override what the
// source says. Fails for simulate (the simulator provides its own URL).
result<connection_config> load_connection(const cluster_options& cluster);

// Whole-config checks both parsers run: unique names, handlers naming existing informers,
// listen addresses, TLS-or-explicit-plaintext for remote subscriptions, cluster fields that fit
// the mode.
status_result check_config(const service_config& config);

// Accepts "host:port", "[v6]:port" and ":port" (all interfaces); errors say what is wrong.
status_result check_listen_address(std::string_view address);

// Go-style durations: "500ms", "30s", "10m", "1h", "1m30s", "0".
result<std::chrono::milliseconds> parse_duration(std::string_view text);

// "pods", "deployments.apps", "widgets.v1.example.com": lower-case DNS-like names.
status_result check_resource_name(std::string_view name);
result<log_level> parse_log_level(std::string_view text);
result<log_format> parse_log_format(std::string_view text);

// The transform for these options; null when they change nothing.
std::shared_ptr<const object_transform> make_transform(const transform_options& options);

// The informer a config entry means, for the cache.
kind_request to_kind_request(const informer_options& informer, const cache_defaults& defaults);
// Changes each informer keeps so that the read API can resume a watch from a list's or an event's
// resourceVersion (read_api.hpp); older resourceVersions are answered 410 Expired.
inline constexpr std::size_t read_api_change_window = 4096;

// The cache's options: defaults, plus one by_object entry per configured informer.
cache_options to_cache_options(const service_config& config);

} // namespace kinformer::service
