#include "app/common/client_flags.hpp"

#include <CLI/App.hpp>
#include <CLI/Config.hpp>
#include <CLI/Formatter.hpp>

#include <string>
#include <vector>

#ifndef KINFORMER_VERSION
#define KINFORMER_VERSION "unknown"
#endif

namespace kinformer {

std::string_view kinformer_version() noexcept {
  return KINFORMER_VERSION;
}

void add_kubeconfig_flags(CLI::App& app, client_flags& flags) {
  app.add_option("--kubeconfig", flags.kubeconfig,
                 "kubeconfig file to use (default: the files KUBECONFIG lists, else "
                 "~/.kube/config, else the pod's service account)");
  app.add_option("--context", flags.context, "kubeconfig context to use (default: current)");
}

void add_connection_flags(CLI::App& app, client_flags& flags) {
  add_kubeconfig_flags(app, flags);
  app.add_option("-s,--server", flags.server, "API server URL (http:// or https://)");
  app.add_option("--token", flags.token, "bearer token");
  app.add_option("--token-file", flags.token_file, "bearer token file, re-read when it changes");
  app.add_option("--certificate-authority", flags.certificate_authority,
                 "CA bundle to verify the server with");
  app.add_flag("--insecure-skip-tls-verify", flags.insecure_skip_tls_verify,
               "do not verify the server's certificate");
}

void add_selection_flags(CLI::App& app, client_flags& flags) {
  app.add_option("-n,--namespace", flags.namespace_,
                 "namespace (default: the kubeconfig context's, else \"default\")");
  app.add_flag("-A,--all-namespaces", flags.all_namespaces, "every namespace");
  app.add_option("-l,--selector", flags.selector, "label selector, e.g. app=web,tier!=db");
  app.add_option("--field-selector", flags.field_selector,
                 "field selector, e.g. status.phase=Running");
}

void add_version_flag(CLI::App& app) {
  app.set_version_flag("--version", app.get_name() + " " + std::string(kinformer_version()));
}

namespace {

result<connection_config> no_kubeconfig_for_context(const std::string& context) {
  return make_error(errc::invalid_argument,
                    "--context " + context +
                        ": no kubeconfig to take it from (KUBECONFIG is unset or names no "
                        "existing file, and there is no ~/.kube/config)");
}

} // namespace

result<connection_config> kubeconfig_context(const client_flags& flags) {
  if (!flags.kubeconfig.empty())
    return load_kubeconfig(flags.kubeconfig, flags.context);
  if (auto paths = kubeconfig_search_paths(); !paths.empty())
    return load_kubeconfig(paths, flags.context);
  if (!flags.context.empty())
    return no_kubeconfig_for_context(flags.context);
  return connection_config{};
}

result<connection_config> resolve_connection(const client_flags& flags) {
  result<connection_config> config = make_error(errc::not_found, "no connection");
  if (!flags.kubeconfig.empty()) {
    config = load_kubeconfig(flags.kubeconfig, flags.context);
  } else if (!flags.server.empty() && flags.context.empty()) {
    config = from_server_url(flags.server);
  } else if (auto paths = kubeconfig_search_paths(); !paths.empty()) {
    config = load_kubeconfig(paths, flags.context);
  } else if (!flags.context.empty()) {
    return no_kubeconfig_for_context(flags.context);
  } else {
    config = in_cluster_config();
    if (!config && config.err().code == errc::not_found)
      return make_error(errc::not_found,
                        "no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a cluster: give "
                        "--server URL or --kubeconfig FILE");
  }
  if (!config)
    return config;
  if (!flags.server.empty() && config->server != flags.server) {
    auto url = parse_server_url(flags.server);
    if (!url)
      return make_error(errc::invalid_argument, "--server: " + url.err().message);
    config->server = flags.server;
    while (config->server.ends_with('/'))
      config->server.pop_back();
  }
  if (!flags.token.empty()) {
    config->token = flags.token;
    config->token_file.clear();
  }
  if (!flags.token_file.empty()) {
    config->token_file = flags.token_file;
    config->token.clear();
  }
  if (!flags.certificate_authority.empty()) {
    config->ca_file = flags.certificate_authority;
    config->ca_data.clear();
  }
  if (flags.insecure_skip_tls_verify)
    config->insecure_skip_tls_verify = true;
  return config;
}

result<std::string> resolve_namespace(const client_flags& flags, const connection_config& config) {
  if (flags.all_namespaces && !flags.namespace_.empty())
    return make_error(errc::invalid_argument,
                      "-A/--all-namespaces and -n/--namespace exclude each other");
  if (flags.all_namespaces)
    return std::string();
  if (!flags.namespace_.empty())
    return flags.namespace_;
  return config.default_namespace.empty() ? std::string("default") : config.default_namespace;
}

} // namespace kinformer
