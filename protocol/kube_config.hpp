#pragma once
// How to reach an API server: the server URL, TLS trust, client credentials and default
// namespace, loaded from the in-cluster service account, a kubeconfig file, or a bare URL.
//
// Loaders only read and validate; they open no connection. Every malformed input comes back as
// an error naming the field (for example `invalid_argument: kubeconfig "/x/config": cluster
// "dev": certificate-authority-data is not valid base64`).

#include "protocol/exec_credential.hpp"
#include "protocol/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

struct connection_config {
  std::string server;                    // "https://host:port[/prefix]" (or http:// for tests)
  std::string ca_file;                   // PEM file of trusted CAs
  std::string ca_data;                   // PEM text of trusted CAs (wins over ca_file)
  bool insecure_skip_tls_verify = false; // no server certificate verification at all
  std::string token;                     // a bearer token...
  std::string token_file;                // ...or a file holding one, re-read when it changes
  std::string client_cert_file;          // PEM client certificate chain
  std::string client_cert_data;
  std::string client_key_file; // PEM private key of the client certificate
  std::string client_key_data;
  std::string tls_server_name;     // overrides the host name used for SNI and verification
  std::string default_namespace;   // "default" unless the source says otherwise
  std::optional<exec_config> exec; // a credential plugin: its token or certificate is used
  std::string proxy_url;           // http://[user:password@]host:port; empty: HTTPS_PROXY...
};

// The parts of a server URL a client needs to connect.
struct server_endpoint {
  bool tls = true;
  std::string host;      // without brackets, even for IPv6 literals
  std::string port;      // "443" / "80" when the URL gives none
  std::string base_path; // a path prefix such as "/k8s/clusters/c-1", without trailing '/'
};

// Parses "https://host[:port][/prefix]"; IPv6 hosts are written "[::1]:6443".
result<server_endpoint> parse_server_url(std::string_view url);

// Where a pod finds its service account credentials.
inline constexpr std::string_view default_service_account_dir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// The in-cluster config from KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT and the service
// account directory (token, ca.crt, namespace). The token is used through `token_file`, so a
// rotated projected token is picked up.
result<connection_config>
in_cluster_config(std::string_view service_account_dir = default_service_account_dir);
// The same, with the host and port given instead of read from the environment.
result<connection_config> in_cluster_config(std::string_view host, std::string_view port,
                                            std::string_view service_account_dir);

// Loads a kubeconfig file at `context`, or at its current-context when `context` is empty.
// Relative file paths resolve against the kubeconfig's directory (so does an exec command
// given as a relative path with a '/'). `auth-provider` users are not supported and give an
// error saying so (client-go dropped them for exec plugins).
result<connection_config> load_kubeconfig(const std::string& path, std::string_view context = {});
// Loads several kubeconfig files merged as kubectl merges the files KUBECONFIG lists
// (client-go's rules): the first file to define a context, cluster or user name wins, and so
// does the first file to set current-context. Each entry's relative paths resolve against the
// directory of the file that defined it. Every file must exist and parse.
result<connection_config> load_kubeconfig(const std::vector<std::string>& paths,
                                          std::string_view context = {});

// The kubeconfig files kubectl would read when none is named: those listed in KUBECONFIG
// (colon-separated; missing files and repeats skipped), or ~/.kube/config when KUBECONFIG is
// unset or empty (when it exists). Empty: no kubeconfig (kubectl then tries in-cluster).
std::vector<std::string> kubeconfig_search_paths();
// The same, from the given values of KUBECONFIG and HOME.
std::vector<std::string> kubeconfig_search_paths(std::string_view kubeconfig_env,
                                                 std::string_view home);

// A config that only names the server (no credentials); the URL is validated.
result<connection_config> from_server_url(std::string_view url);

} // namespace kinformer
