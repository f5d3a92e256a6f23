#include "protocol/exec_credential.hpp"

#include "protocol/base64.hpp"

#include <boost/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kinformer {

namespace {

namespace json = boost::json;

// A plugin printing more than this is broken: its output is not read past it.
constexpr std::size_t max_output_bytes = 1 << 20;

// KUBERNETES_EXEC_INFO: what client-go tells a plugin.
std::string exec_info(const exec_config& config, const exec_cluster_info& cluster,
                      bool interactive) {
  json::object spec{{"interactive", interactive}};
  if (config.provide_cluster_info) {
    json::object c{{"server", cluster.server}};
    if (!cluster.tls_server_name.empty())
      c["tls-server-name"] = cluster.tls_server_name;
    if (cluster.insecure_skip_tls_verify)
      c["insecure-skip-tls-verify"] = true;
    if (!cluster.certificate_authority_data.empty())
      c["certificate-authority-data"] = encode_base64(cluster.certificate_authority_data);
    spec["cluster"] = std::move(c);
  }
  return json::serialize(json::object{
      {"kind", "ExecCredential"}, {"apiVersion", config.api_version}, {"spec", std::move(spec)}});
}

// This process's environment, with the config's variables and KUBERNETES_EXEC_INFO set.
std::vector<std::string> plugin_environment(const exec_config& config, const std::string& info) {
  std::vector<std::pair<std::string, std::string>> overrides = config.env;
  overrides.emplace_back("KUBERNETES_EXEC_INFO", info);
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : overrides)
      replaced = replaced || key == name;
    if (!replaced)
      out.emplace_back(entry);
  }
  for (const auto& [key, value] : overrides)
    out.push_back(key + "=" + value);
  return out;
}

error plugin_error(const exec_config& config, const std::string& why) {
  return make_error(errc::credentials, "exec plugin \"" + config.command + "\": " + why);
}

} // namespace

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
  auto digits = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    if (at + n > text.size())
      return std::nullopt;
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9')
        return std::nullopt;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  const auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  const auto hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || text.size() < 20 ||
      text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') || text[13] != ':' ||
      text[16] != ':' || *hour > 23 || *minute > 59 || *second > 60)
    return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok())
    return std::nullopt;
  std::size_t at = 19;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const std::size_t start = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9')
      ++at;
    if (at == start)
      return std::nullopt;
  }
  std::chrono::minutes offset{0};
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const auto oh = digits(at + 1, 2), om = digits(at + 4, 2);
    if (!oh || !om || at + 6 > text.size() || text[at + 3] != ':')
      return std::nullopt;
    offset = std::chrono::hours(*oh) + std::chrono::minutes(*om);
    if (text[at] == '-')
      offset = -offset;
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != text.size())
    return std::nullopt;
  const std::chrono::sys_seconds at_seconds =
      std::chrono::sys_days(date) + std::chrono::hours(*hour) + std::chrono::minutes(*minute) +
      std::chrono::seconds(*second) - offset;
  // The system clock counts nanoseconds: beyond the year 2262 a time is "never" for us.
  using clock = std::chrono::system_clock;
  const auto limit = std::chrono::floor<std::chrono::seconds>(clock::time_point::max());
  if (at_seconds.time_since_epoch() >= limit.time_since_epoch())
    return clock::time_point::max();
  return clock::time_point(at_seconds);
}

result<exec_credential> parse_exec_credential(std::string_view text, std::string_view api_version) {
  auto fail = [](const std::string& why) {
    return make_error(errc::credentials, "ExecCredential: " + why);
  };
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec)
    return fail("not JSON (" + ec.message() + ")");
  const json::object* root = doc.if_object();
  if (!root)
    return fail("not a JSON object");
  auto string_at = [](const json::object& o, std::string_view key) -> std::string {
    const json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  if (string_at(*root, "kind") != "ExecCredential")
    return fail("kind is \"" + string_at(*root, "kind") + "\", not ExecCredential");
  if (string_at(*root, "apiVersion") != api_version)
    return fail("apiVersion is \"" + string_at(*root, "apiVersion") +
                "\", the kubeconfig asked for \"" + std::string(api_version) + "\"");
  const json::value* status = root->if_contains("status");
  if (!status || !status->is_object())
    return fail("no status");
  exec_credential out;
  const json::object& s = status->get_object();
  out.token = string_at(s, "token");
  out.client_certificate_data = string_at(s, "clientCertificateData");
  out.client_key_data = string_at(s, "clientKeyData");
  if (out.client_certificate_data.empty() != out.client_key_data.empty())
    return fail("status has a client certificate without its key, or a key without its "
                "certificate");
  if (out.token.empty() && out.client_certificate_data.empty())
    return fail("status has neither a token nor a client certificate");
  if (const std::string expiry = string_at(s, "expirationTimestamp"); !expiry.empty()) {
    out.expiration = parse_rfc3339(expiry);
    if (!out.expiration)
      return fail("expirationTimestamp \"" + expiry + "\" is not an RFC 3339 time");
  }
  return out;
}

result<exec_credential> run_exec_plugin(const exec_config& config, const exec_cluster_info& cluster,
                                        bool stdin_is_terminal) {
  if (config.api_version != "client.authentication.k8s.io/v1" &&
      config.api_version != "client.authentication.k8s.io/v1beta1")
    return plugin_error(config, "apiVersion \"" + config.api_version +
                                    "\" is not client.authentication.k8s.io/v1 or v1beta1");
  if (config.command.empty())
    return plugin_error(config, "no command");
  if (config.interactive_mode == exec_interactive_mode::always && !stdin_is_terminal)
    return plugin_error(config, "interactiveMode is Always but standard input is not a terminal");
  const bool interactive =
      config.interactive_mode != exec_interactive_mode::never && stdin_is_terminal;

  std::vector<std::string> argv_storage{config.command};
  argv_storage.insert(argv_storage.end(), config.args.begin(), config.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage =
      plugin_environment(config, exec_info(config, cluster, interactive));
  std::vector<char*> envp;
  for (auto& e : env_storage)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return plugin_error(config, std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  if (!interactive)
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int spawned =
      ::posix_spawnp(&pid, config.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    std::string why = std::strerror(spawned);
    if (spawned == ENOENT)
      why =
          "not found" + (config.install_hint.empty() ? std::string() : "; " + config.install_hint);
    return plugin_error(config, why);
  }

  std::string output;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(out_pipe[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    if (output.size() < max_output_bytes)
      output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    return plugin_error(config, "killed by signal " + std::to_string(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return plugin_error(config, "exited with status " + std::to_string(WEXITSTATUS(status)));
  if (output.size() >= max_output_bytes)
    return plugin_error(config, "printed more than 1 MiB");
  auto credential = parse_exec_credential(output, config.api_version);
  if (!credential)
    return plugin_error(config, credential.err().message);
  return credential;
}

exec_credential_cache::exec_credential_cache(exec_config config, exec_cluster_info cluster)
    : config_(std::move(config)), cluster_(std::move(cluster)) {}

result<exec_credential> exec_credential_cache::current(bool& changed) {
  changed = false;
  const auto now = std::chrono::system_clock::now();
  if (valid_ && (!credential_.expiration || *credential_.expiration > now))
    return credential_;
  ++runs_;
  auto fresh = run_exec_plugin(config_, cluster_, ::isatty(STDIN_FILENO) == 1);
  if (!fresh)
    return fresh;
  changed = fresh->token != credential_.token ||
            fresh->client_certificate_data != credential_.client_certificate_data ||
            fresh->client_key_data != credential_.client_key_data;
  credential_ = std::move(*fresh);
  valid_ = true;
  return credential_;
}

} // namespace kinformer
