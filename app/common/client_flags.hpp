#pragma once
// The flags the kinformer tools share, spelled as kubectl spells them, and the connection and
// namespace kubectl would derive from them. Every tool parses its command line with CLI11
// through these; CLI11 itself stays out of this header.

#include "protocol/kube_config.hpp"
#include "protocol/result.hpp"

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace kinformer {

struct client_flags {
  std::string kubeconfig;                // --kubeconfig FILE
  std::string context;                   // --context NAME
  std::string server;                    // -s, --server URL
  std::string token;                     // --token TOKEN
  std::string token_file;                // --token-file FILE
  std::string certificate_authority;     // --certificate-authority FILE
  bool insecure_skip_tls_verify = false; // --insecure-skip-tls-verify
  std::string namespace_;                // -n, --namespace NS
  bool all_namespaces = false;           // -A, --all-namespaces
  std::string selector;                  // -l, --selector SEL
  std::string field_selector;            // --field-selector SEL
};

// The version every tool prints for --version.
std::string_view kinformer_version() noexcept;

// --kubeconfig, --context, --server, --token, --token-file, --certificate-authority,
// --insecure-skip-tls-verify.
void add_connection_flags(CLI::App& app, client_flags& flags);
// --kubeconfig and --context alone: for a tool that talks to kinformerd rather than to an API
// server, and takes only the context's namespace from the kubeconfig.
void add_kubeconfig_flags(CLI::App& app, client_flags& flags);
// -n/--namespace, -A/--all-namespaces, -l/--selector, --field-selector.
void add_selection_flags(CLI::App& app, client_flags& flags);
// --version: prints "<tool> <version>" and exits with 0.
void add_version_flag(CLI::App& app);

// The connection kubectl would make (clientcmd's precedence):
// - --kubeconfig FILE, else the files KUBECONFIG lists (merged), else ~/.kube/config, at
//   --context (or the current context), with --server, --token... overriding what it says;
// - --server alone (no --kubeconfig, --context, KUBECONFIG or ~/.kube/config): that server;
// - no kubeconfig anywhere: the pod's service account (in-cluster).
// Deliberate difference: with --server and no --kubeconfig or --context, no kubeconfig file is
// read at all, so a bare URL never receives the current context's credentials.
result<connection_config> resolve_connection(const client_flags& flags);

// The kubeconfig's context as kubectl picks it (--kubeconfig, else KUBECONFIG's files, else
// ~/.kube/config; --context, else the current one), for its namespace. With no kubeconfig
// anywhere, an empty config (and --context is an error).
result<connection_config> kubeconfig_context(const client_flags& flags);

// The namespace to work in: "" (all) with -A, -n's when given, else the context's namespace
// ("default" without a kubeconfig), as kubectl chooses it. -A with -n is an error.
result<std::string> resolve_namespace(const client_flags& flags, const connection_config& config);

} // namespace kinformer
