#pragma once
// Exec credential plugins (client.authentication.k8s.io/v1 and v1beta1 ExecCredential), as
// client-go runs them: the kubeconfig user's `exec` names a command; its stdout is an
// ExecCredential carrying a bearer token or a client certificate and key, kept until its
// expirationTimestamp and fetched again after a 401. This is how kubectl reaches EKS
// (aws eks get-token), GKE (gke-gcloud-auth-plugin) and AKS (kubelogin).

#include "protocol/result.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kinformer {

enum class exec_interactive_mode { never, if_available, always };

// A kubeconfig user's `exec` section.
struct exec_config {
  std::string api_version; // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;     // run through PATH, or a path (relative ones resolved by the loader)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env; // added to this process's environment
  std::string install_hint;                             // shown when the command is missing
  bool provide_cluster_info = false;
  exec_interactive_mode interactive_mode = exec_interactive_mode::if_available;
};

// What the plugin is told about the cluster when provide_cluster_info is set.
struct exec_cluster_info {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string certificate_authority_data; // PEM
};

struct exec_credential {
  std::string token;
  std::string client_certificate_data; // PEM
  std::string client_key_data;         // PEM
  // None: valid until a 401 says otherwise.
  std::optional<std::chrono::system_clock::time_point> expiration;
};

// Reads the ExecCredential a plugin printed; `api_version` is the one the kubeconfig asked for,
// which the answer must carry. Errors name what is wrong.
result<exec_credential> parse_exec_credential(std::string_view text, std::string_view api_version);

// Runs the plugin once: the environment gets the config's `env` and KUBERNETES_EXEC_INFO (an
// ExecCredential with spec.interactive, and spec.cluster when provide_cluster_info); the
// plugin's stderr goes to ours, as kubectl lets it. `stdin_is_terminal` decides interactivity:
// with it the plugin may read our stdin; interactiveMode Always without it is an error.
result<exec_credential> run_exec_plugin(const exec_config& config, const exec_cluster_info& cluster,
                                        bool stdin_is_terminal);

// The credential to use now, running the plugin when there is none, when it has expired, or
// after invalidate() (a 401). Not thread-safe: one owner (the API client's I/O thread).
class exec_credential_cache {
public:
  exec_credential_cache(exec_config config, exec_cluster_info cluster);

  // The current credential; runs the plugin when needed. `changed` is set when it ran and the
  // credential differs from the one before.
  result<exec_credential> current(bool& changed);
  // The server refused the credential: the next current() runs the plugin again.
  void invalidate() noexcept { valid_ = false; }
  std::size_t runs() const noexcept { return runs_; }

private:
  exec_config config_;
  exec_cluster_info cluster_;
  exec_credential credential_;
  bool valid_ = false;
  std::size_t runs_ = 0;
};

// RFC 3339 ("2026-11-25T08:00:00Z", fractions and offsets allowed), as expirationTimestamp.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

} // namespace kinformer
