// kinformerd's command line: `--config FILE` first, then every other flag on top of it (flags
// win), then the connection mode from the environment and the whole-config checks.

#include "app/kinformerd/config.hpp"

#include <CLI/App.hpp>
#include <CLI/Config.hpp>
#include <CLI/Formatter.hpp>

#include <map>
#include <vector>

namespace kinformer::service {

namespace {

constexpr std::string_view help_text =
    R"(kinformerd: Kubernetes informers and a read-through cache as a service.

Usage: kinformerd [--config FILE] [flags]

Runs informers against an API server, serves what they cache through a Kubernetes-compatible
read API, exports Prometheus metrics with /healthz and /readyz, and passes changes to handlers.
Flags override the config file (deploy/kinformerd.yaml documents its format).

Cluster connection (default: the pod's service account when KUBERNETES_SERVICE_HOST and
KUBERNETES_SERVICE_PORT are set; otherwise one of these is required):
  --server URL                   API server URL (https://host:port)
  --token-file FILE              bearer token file, re-read when it changes
  --certificate-authority FILE   PEM file of CAs to trust for the server
  --insecure-skip-tls-verify     do not verify the server's certificate (testing only)
  --kubeconfig FILE              use a kubeconfig file...
  --context NAME                 ...at this context (default: its current-context)
                                 Without any of these, the files KUBECONFIG lists (merged as
                                 kubectl merges them) or ~/.kube/config are used when present.
  --simulate                     start the embedded API-server simulator (realistic pods and
                                 churn) and run against it; watches pods and logs deltas unless
                                 informers or handlers are configured

Informers:
  --watch RESOURCE               run an informer for RESOURCE (repeatable): pods,
                                 deployments.apps, widgets.example.com
  -n, --namespace NS             limit every informer to these namespaces (repeatable;
                                 default: all)
  -A, --all-namespaces           every namespace (drops namespaces the config file names)
  -l, --selector SELECTOR        label selector for every informer (app=web,tier!=db)
  --field-selector SELECTOR      field selector for every informer (status.phase=Running)
  --metadata-only                cache PartialObjectMetadata instead of full objects
  --compress-objects             keep cached objects' text compressed (less memory; each
                                 object served is decompressed); metadata-only informers
                                 do unless --compress-objects=false

Service:
  --listen-api HOST:PORT         read API address (127.0.0.1:8080; port 0 picks a free one;
                                 "" turns it off)
  --listen-metrics HOST:PORT     /metrics, /healthz, /readyz address (127.0.0.1:9090)
  --log-level LEVEL              debug, info, warn or error (info)
  --leader-elect                 elect a leader among replicas with a Lease; webhooks run on
                                 the leader only (config: leader_election)
  --config FILE                  YAML config file; flags override it
  --version                      print the version
  --help                         print this text

Flags take their value as the next argument or after '=' (--watch=pods); switches take
=true or =false. Errors name the flag or config field; a bad configuration exits with status 2.
)";

error invalid(std::string message) {
  return make_error(errc::invalid_argument, std::move(message));
}

// One flag as given, in command-line order: its long name and its value, if it had one.
struct flag {
  std::string name; // "--watch"
  std::optional<std::string> value;
};

// What apply_flag asks of a flag's value.
class arguments {
public:
  explicit arguments(const flag& f) : flag_(f) {}

  result<std::string> value() const {
    if (!flag_.value)
      return invalid(flag_.name + ": missing value");
    return *flag_.value;
  }

  result<bool> switch_value() const {
    if (!flag_.value || *flag_.value == "true")
      return true;
    if (*flag_.value == "false")
      return false;
    return invalid(flag_.name + ": \"" + *flag_.value + "\" is not true or false");
  }

private:
  const flag& flag_;
};

// The flags CLI11 recognised, in the order given, each occurrence with its own value.
std::vector<flag> flags_in_order(const CLI::App& app) {
  std::vector<flag> out;
  std::map<const CLI::Option*, std::size_t> used;
  for (const CLI::Option* option : app.parse_order()) {
    const std::string name = "--" + option->get_lnames().front();
    const auto& results = option->results();
    std::size_t& next = used[option];
    std::optional<std::string> value;
    if (next < results.size())
      value = results[next];
    ++next;
    out.push_back(flag{name, std::move(value)});
  }
  return out;
}

// Where the connection came from on the command line: two different choices conflict.
class connection_choice {
public:
  status_result choose(connection_mode mode, const std::string& flag) {
    if (mode_ && *mode_ != mode)
      return invalid(flag + ": conflicts with " + flag_);
    mode_ = mode;
    flag_ = flag;
    return ok_v;
  }

private:
  std::optional<connection_mode> mode_;
  std::string flag_;
};

// Applies one flag (other than --config and --help) to `config`.
status_result apply_flag(const flag& f, const arguments& args, service_config& config,
                         connection_choice& connection, bool& namespaces_from_flags,
                         bool& all_namespaces) {
  auto cluster_path = [&](std::string& target) -> status_result {
    auto v = args.value();
    if (!v)
      return std::move(v).err();
    target = *v;
    return ok_v;
  };
  // Chooses the connection mode; the file's other connection settings no longer apply.
  auto choose_mode = [&](connection_mode mode) -> status_result {
    if (auto r = connection.choose(mode, f.name); !r)
      return r;
    config.cluster.mode = mode;
    if (mode != connection_mode::server)
      config.cluster.server.clear();
    if (mode != connection_mode::kubeconfig) {
      config.cluster.kubeconfig.clear();
      config.cluster.context.clear();
    }
    return ok_v;
  };

  const std::string& name = f.name;
  if (name == "--server") {
    if (auto r = choose_mode(connection_mode::server); !r)
      return r;
    if (auto r = cluster_path(config.cluster.server); !r)
      return r;
    if (auto url = parse_server_url(config.cluster.server); !url)
      return invalid("--server: " + url.err().message);
    return ok_v;
  }
  if (name == "--kubeconfig") {
    if (auto r = choose_mode(connection_mode::kubeconfig); !r)
      return r;
    return cluster_path(config.cluster.kubeconfig);
  }
  if (name == "--context")
    return cluster_path(config.cluster.context);
  if (name == "--token-file")
    return cluster_path(config.cluster.token_file);
  if (name == "--certificate-authority")
    return cluster_path(config.cluster.certificate_authority);
  if (name == "--simulate") {
    auto on = args.switch_value();
    if (!on)
      return std::move(on).err();
    return *on ? choose_mode(connection_mode::simulate) : status_result(ok_v);
  }
  if (name == "--all-namespaces") {
    auto on = args.switch_value();
    if (!on)
      return std::move(on).err();
    if (*on) {
      if (namespaces_from_flags)
        return invalid("--all-namespaces: conflicts with --namespace");
      config.defaults.namespaces.clear(); // no namespace named: every namespace
      all_namespaces = true;
    }
    return ok_v;
  }
  if (name == "--compress-objects") { // =false keeps metadata-only informers' text as received
    auto on = args.switch_value();
    if (!on)
      return std::move(on).err();
    config.defaults.compress_objects = *on;
    return ok_v;
  }
  if (name == "--insecure-skip-tls-verify" || name == "--metadata-only" ||
      name == "--leader-elect") {
    auto on = args.switch_value();
    if (!on)
      return std::move(on).err();
    (name == "--metadata-only"  ? config.defaults.metadata_only
     : name == "--leader-elect" ? config.leader_election.enabled
                                : config.cluster.insecure_skip_tls_verify) = *on;
    return ok_v;
  }

  auto v = args.value();
  if (!v)
    return std::move(v).err();
  const std::string& value = *v;
  if (name == "--watch") {
    if (auto valid = check_resource_name(value); !valid)
      return invalid("--watch: " + valid.err().message);
    for (std::size_t i = 0; i < config.informers.size(); ++i)
      if (config.informers[i].name == value)
        return invalid("--watch: \"" + value + "\" is already watched (informers[" +
                       std::to_string(i) + "])");
    informer_options informer;
    informer.name = informer.resource = value;
    config.informers.push_back(std::move(informer));
  } else if (name == "--namespace") {
    if (all_namespaces)
      return invalid("--namespace: conflicts with --all-namespaces");
    // The first --namespace replaces the file's list; later ones add to it.
    if (!namespaces_from_flags)
      config.defaults.namespaces.clear();
    namespaces_from_flags = true;
    config.defaults.namespaces.push_back(value);
  } else if (name == "--selector") {
    auto parsed = label_selector::parse(value);
    if (!parsed)
      return invalid("--selector: " + parsed.err().message);
    config.defaults.labels = std::move(parsed).value();
  } else if (name == "--field-selector") {
    auto parsed = field_selector::parse(value);
    if (!parsed)
      return invalid("--field-selector: " + parsed.err().message);
    config.defaults.fields = std::move(parsed).value();
  } else if (name == "--listen-api" || name == "--listen-metrics") {
    const bool api = name == "--listen-api";
    if (!(api && value.empty()))
      if (auto valid = check_listen_address(value); !valid)
        return invalid(name + ": " + valid.err().message);
    (api ? config.listen.api : config.listen.metrics) = value;
  } else if (name == "--log-level") {
    auto level = parse_log_level(value);
    if (!level)
      return invalid("--log-level: " + level.err().message);
    config.level = *level;
  } else {
    return invalid(name + ": unknown flag (see --help)");
  }
  return ok_v;
}

// What `kinformerd --simulate` does with nothing else configured: watch pods, log the deltas.
void add_simulate_defaults(service_config& config) {
  if (config.cluster.mode != connection_mode::simulate)
    return;
  if (config.informers.empty()) {
    informer_options pods;
    pods.name = pods.resource = "pods";
    config.informers.push_back(std::move(pods));
  }
  if (config.handlers.log.empty() && config.handlers.webhooks.empty()) {
    log_handler_options log;
    log.name = "log";
    config.handlers.log.push_back(std::move(log));
  }
}

} // namespace

std::string_view command_line_help() noexcept {
  return help_text;
}

result<service_config> parse_command_line(int argc, const char* const* argv,
                                          const env_lookup& env) {
  // CLI11 splits the command line (--x=y, -n NS, repeated flags); the flags are then applied in
  // the order given, on top of the config file, by apply_flag, which checks every value.
  CLI::App app("kinformerd", "kinformerd");
  app.set_help_flag("-h,--help");
  app.add_flag("--version");
  for (const char* name : {"--config", "--server", "--kubeconfig", "--context", "--token-file",
                           "--certificate-authority", "--watch", "-n,--namespace", "-l,--selector",
                           "--field-selector", "--listen-api", "--listen-metrics", "--log-level"})
    app.add_option(name)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false);
  for (const char* name : {"--simulate", "--insecure-skip-tls-verify", "--metadata-only",
                           "--compress-objects", "-A,--all-namespaces", "--leader-elect"})
    app.add_flag(name)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    service_config help;
    help.show_help = true;
    return help;
  } catch (const CLI::ParseError& e) {
    return invalid(std::string(e.what()) + " (see --help)");
  }
  if (app.count("--version") > 0) {
    service_config version;
    version.show_version = true;
    return version;
  }

  const std::vector<flag> flags = flags_in_order(app);
  std::optional<std::string> config_file;
  for (const flag& f : flags) {
    if (f.name != "--config")
      continue;
    if (config_file)
      return invalid("--config: given twice");
    auto v = arguments(f).value();
    if (!v)
      return std::move(v).err();
    config_file = *v;
  }

  service_config config;
  if (config_file) {
    auto loaded = load_config_file(*config_file);
    if (!loaded)
      return loaded;
    config = std::move(loaded).value();
  }

  connection_choice connection;
  bool namespaces_from_flags = false, all_namespaces = false;
  for (const flag& f : flags) {
    if (f.name == "--config" || f.name == "--version")
      continue;
    if (auto applied =
            apply_flag(f, arguments(f), config, connection, namespaces_from_flags, all_namespaces);
        !applied)
      return std::move(applied).err();
  }

  auto mode = resolve_connection_mode(config.cluster, env);
  if (!mode)
    return std::move(mode).err();
  config.cluster.mode = *mode;
  add_simulate_defaults(config);
  if (config.informers.empty())
    return invalid("informers: none configured (give --watch RESOURCE, or informers: in the "
                   "config file)");
  if (auto valid = check_config(config); !valid)
    return std::move(valid).err();
  return config;
}

} // namespace kinformer::service
