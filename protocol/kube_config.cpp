#include "protocol/kube_config.hpp"

#include "protocol/base64.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace kinformer {

namespace {

bool is_digits(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

result<std::string> read_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return make_error(errc::not_found, std::string(what) + " file \"" + path + "\" does not exist");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(errc::not_found,
                      std::string(what) + " file \"" + path + "\" is not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

} // namespace

result<server_endpoint> parse_server_url(std::string_view url) {
  const auto fail = [&](const std::string& why) {
    return make_error(errc::invalid_argument, "server URL \"" + std::string(url) + "\": " + why);
  };
  server_endpoint ep;
  std::string_view rest = url;
  if (rest.starts_with("https://")) {
    ep.tls = true;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    ep.tls = false;
    rest.remove_prefix(7);
  } else {
    return fail("scheme must be https:// or http://");
  }
  const auto path_start = rest.find('/');
  std::string_view authority = rest.substr(0, path_start);
  std::string_view path = path_start == std::string_view::npos ? "" : rest.substr(path_start);
  if (path.find_first_of("?#") != std::string_view::npos)
    return fail("query strings and fragments are not allowed");
  if (authority.find('@') != std::string_view::npos)
    return fail("user information is not allowed");
  std::string_view port;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos)
      return fail("unterminated '[' in IPv6 host");
    ep.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return fail("unexpected text after ']'");
      port = after.substr(1);
      if (port.empty())
        return fail("empty port");
    }
  } else {
    const auto colon = authority.find(':');
    if (colon != std::string_view::npos && authority.find(':', colon + 1) != std::string_view::npos)
      return fail("IPv6 hosts must be written in brackets, as [::1]:6443");
    ep.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty())
        return fail("empty port");
    }
  }
  if (ep.host.empty())
    return fail("missing host");
  if (!port.empty()) {
    if (!is_digits(port) || port.size() > 5 || std::stoi(std::string(port)) == 0 ||
        std::stoi(std::string(port)) > 65535)
      return fail("port \"" + std::string(port) + "\" is not a number in 1..65535");
    ep.port = std::string(port);
  } else {
    ep.port = ep.tls ? "443" : "80";
  }
  while (path.ends_with('/'))
    path.remove_suffix(1);
  ep.base_path = std::string(path);
  return ep;
}

result<connection_config> from_server_url(std::string_view url) {
  auto ep = parse_server_url(url);
  if (!ep)
    return std::move(ep).err();
  connection_config config;
  config.server = std::string(url);
  while (config.server.ends_with('/'))
    config.server.pop_back();
  config.default_namespace = "default";
  return config;
}

result<connection_config> in_cluster_config(std::string_view host, std::string_view port,
                                            std::string_view service_account_dir) {
  if (host.empty() || port.empty())
    return make_error(errc::not_found, "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                                       "KUBERNETES_SERVICE_PORT must both be set");
  const std::filesystem::path dir(service_account_dir);
  connection_config config;
  const bool ipv6 = host.find(':') != std::string_view::npos;
  config.server = "https://" + (ipv6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" +
                  std::string(port);
  if (auto ep = parse_server_url(config.server); !ep)
    return make_error(errc::invalid_argument, "in-cluster config: " + ep.err().message);

  // The token is read now to fail early, and again by the client whenever the file changes.
  config.token_file = (dir / "token").string();
  auto token = read_file(config.token_file, "service account token");
  if (!token)
    return std::move(token).err();
  config.token = trim(std::move(*token));
  if (config.token.empty())
    return make_error(errc::invalid_argument,
                      "service account token file \"" + config.token_file + "\" is empty");

  config.ca_file = (dir / "ca.crt").string();
  if (auto ca = read_file(config.ca_file, "service account CA"); !ca)
    return std::move(ca).err();

  config.default_namespace = "default";
  const auto ns_path = (dir / "namespace").string();
  std::error_code ec;
  if (std::filesystem::exists(ns_path, ec)) {
    auto ns = read_file(ns_path, "service account namespace");
    if (!ns)
      return std::move(ns).err();
    if (auto value = trim(std::move(*ns)); !value.empty())
      config.default_namespace = std::move(value);
  }
  return config;
}

result<connection_config> in_cluster_config(std::string_view service_account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  return in_cluster_config(host ? host : "", port ? port : "", service_account_dir);
}

namespace {

// Reads kubeconfig nodes, with every error prefixed by the file and the entry it concerns.
class kubeconfig_reader {
public:
  explicit kubeconfig_reader(std::string path)
      : path_(std::move(path)), dir_(std::filesystem::path(path_).parent_path()) {}

  error fail(const std::string& why) const {
    return make_error(errc::invalid_argument, "kubeconfig \"" + path_ + "\": " + why);
  }

  // A string field: empty when absent, an error when present but not a scalar.
  result<std::string> string_field(const YAML::Node& map, const char* key,
                                   const std::string& where) const {
    const YAML::Node node = map[key];
    if (!node || node.IsNull())
      return std::string();
    if (!node.IsScalar())
      return fail(where + ": " + key + " must be a string");
    return node.Scalar();
  }

  result<bool> bool_field(const YAML::Node& map, const char* key, const std::string& where) const {
    const YAML::Node node = map[key];
    if (!node || node.IsNull())
      return false;
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value))
      return fail(where + ": " + key + " must be true or false");
    return value;
  }

  // A file path field, resolved against the kubeconfig's directory when relative.
  result<std::string> path_field(const YAML::Node& map, const char* key,
                                 const std::string& where) const {
    auto value = string_field(map, key, where);
    if (!value || value->empty())
      return value;
    std::filesystem::path p(*value);
    return p.is_absolute() ? *value : (dir_ / p).lexically_normal().string();
  }

  result<std::string> base64_field(const YAML::Node& map, const char* key,
                                   const std::string& where) const {
    auto value = string_field(map, key, where);
    if (!value || value->empty())
      return value;
    auto decoded = decode_base64(*value);
    if (!decoded)
      return fail(where + ": " + key + " is " + decoded.err().message);
    return decoded;
  }

  // The `section` body (cluster / user / context) of the entry called `name` in `list_key`.
  result<YAML::Node> named_entry(const YAML::Node& root, const char* list_key, const char* section,
                                 const std::string& name) const {
    const YAML::Node list = root[list_key];
    if (list && !list.IsNull() && !list.IsSequence())
      return fail(std::string(list_key) + " must be a list");
    if (list && list.IsSequence()) {
      for (const auto& entry : list) {
        if (!entry.IsMap())
          return fail(std::string(list_key) + " entries must be maps");
        const YAML::Node entry_name = entry["name"];
        if (entry_name && entry_name.IsScalar() && entry_name.Scalar() == name) {
          const YAML::Node body = entry[section];
          if (!body || body.IsNull())
            return YAML::Node(YAML::NodeType::Map);
          if (!body.IsMap())
            return fail(std::string(section) + " \"" + name + "\": " + section + " must be a map");
          return body;
        }
      }
    }
    return make_error(errc::not_found, "kubeconfig \"" + path_ + "\": no " + section + " named \"" +
                                           name + "\" in " + list_key);
  }

  const std::string& path() const { return path_; }

private:
  std::string path_;
  std::filesystem::path dir_;
};

// `"a"` or `"a", "b"`: the files an error concerns.
template <class Files>
std::string describe_files(const Files& files) {
  std::string out;
  for (const auto& file : files) {
    if (!out.empty())
      out += ", ";
    out += "\"" + file.reader.path() + "\"";
  }
  return out;
}

// Shorthand for "take the value or return the error" inside the loader.
#define KINFORMER_TRY_ASSIGN(target, expr)                                                         \
  do {                                                                                             \
    auto try_result_ = (expr);                                                                     \
    if (!try_result_)                                                                              \
      return std::move(try_result_).err();                                                         \
    target = std::move(*try_result_);                                                              \
  } while (false)

// One kubeconfig file, parsed.
struct kubeconfig_file {
  kubeconfig_reader reader;
  YAML::Node root;
};

// The entry `name` of `list_key` from the first file that defines it (client-go's merge: the
// first file to set a map key wins), with the reader of that file, whose directory relative
// paths in the entry resolve against.
result<std::pair<YAML::Node, const kubeconfig_reader*>>
first_entry(const std::vector<kubeconfig_file>& files, const char* list_key, const char* section,
            const std::string& name) {
  for (const auto& file : files) {
    auto entry = file.reader.named_entry(file.root, list_key, section, name);
    if (entry)
      return std::pair{std::move(*entry), &file.reader};
    if (entry.err().code != errc::not_found)
      return std::move(entry).err();
  }
  return make_error(errc::not_found, "kubeconfig " + describe_files(files) + ": no " + section +
                                         " named \"" + name + "\" in " + list_key);
}

// A user's `exec` section (client-go's ExecConfig).
result<exec_config> read_exec(const kubeconfig_reader& r, const YAML::Node& exec,
                              const std::string& where) {
  if (!exec.IsMap())
    return r.fail(where + " must be a map");
  exec_config out;
  KINFORMER_TRY_ASSIGN(out.api_version, r.string_field(exec, "apiVersion", where));
  if (out.api_version != "client.authentication.k8s.io/v1" &&
      out.api_version != "client.authentication.k8s.io/v1beta1")
    return r.fail(where + ": apiVersion \"" + out.api_version +
                  "\" is not client.authentication.k8s.io/v1 or v1beta1");
  KINFORMER_TRY_ASSIGN(out.command, r.string_field(exec, "command", where));
  if (out.command.empty())
    return r.fail(where + ": command is missing");
  // A relative path resolves against the kubeconfig's directory; a bare name goes to PATH.
  if (out.command.find('/') != std::string::npos)
    KINFORMER_TRY_ASSIGN(out.command, r.path_field(exec, "command", where));
  if (const YAML::Node args = exec["args"]; args && !args.IsNull()) {
    if (!args.IsSequence())
      return r.fail(where + ": args must be a list of strings");
    for (const auto& arg : args) {
      if (!arg.IsScalar())
        return r.fail(where + ": args must be a list of strings");
      out.args.push_back(arg.Scalar());
    }
  }
  if (const YAML::Node env = exec["env"]; env && !env.IsNull()) {
    if (!env.IsSequence())
      return r.fail(where + ": env must be a list of {name, value}");
    for (const auto& entry : env) {
      if (!entry.IsMap() || !entry["name"] || !entry["name"].IsScalar() ||
          entry["name"].Scalar().empty())
        return r.fail(where + ": env entries need a name");
      std::string value;
      KINFORMER_TRY_ASSIGN(value, r.string_field(entry, "value", where + ": env"));
      out.env.emplace_back(entry["name"].Scalar(), std::move(value));
    }
  }
  KINFORMER_TRY_ASSIGN(out.install_hint, r.string_field(exec, "installHint", where));
  KINFORMER_TRY_ASSIGN(out.provide_cluster_info, r.bool_field(exec, "provideClusterInfo", where));
  std::string mode;
  KINFORMER_TRY_ASSIGN(mode, r.string_field(exec, "interactiveMode", where));
  if (mode.empty() || mode == "IfAvailable")
    out.interactive_mode = exec_interactive_mode::if_available;
  else if (mode == "Never")
    out.interactive_mode = exec_interactive_mode::never;
  else if (mode == "Always")
    out.interactive_mode = exec_interactive_mode::always;
  else
    return r.fail(where + ": interactiveMode \"" + mode + "\" is not Never, IfAvailable or Always");
  return out;
}

result<connection_config> read_kubeconfig(const std::vector<kubeconfig_file>& files,
                                          std::string_view requested_context) {
  std::string context_name(requested_context);
  // The first file that sets current-context wins.
  for (const auto& file : files) {
    if (!context_name.empty())
      break;
    KINFORMER_TRY_ASSIGN(context_name,
                         file.reader.string_field(file.root, "current-context", "top level"));
  }
  if (context_name.empty())
    return make_error(errc::invalid_argument, "kubeconfig " + describe_files(files) +
                                                  ": no current-context is set and no context "
                                                  "was given");

  std::pair<YAML::Node, const kubeconfig_reader*> found;
  KINFORMER_TRY_ASSIGN(found, first_entry(files, "contexts", "context", context_name));
  const YAML::Node context = found.first;
  const kubeconfig_reader* r = found.second;
  const std::string context_where = "context \"" + context_name + "\"";
  std::string cluster_name, user_name;
  connection_config config;
  KINFORMER_TRY_ASSIGN(cluster_name, r->string_field(context, "cluster", context_where));
  KINFORMER_TRY_ASSIGN(user_name, r->string_field(context, "user", context_where));
  KINFORMER_TRY_ASSIGN(config.default_namespace,
                       r->string_field(context, "namespace", context_where));
  if (config.default_namespace.empty())
    config.default_namespace = "default";
  if (cluster_name.empty())
    return r->fail(context_where + ": cluster is missing");

  KINFORMER_TRY_ASSIGN(found, first_entry(files, "clusters", "cluster", cluster_name));
  const YAML::Node cluster = found.first;
  r = found.second;
  const std::string cluster_where = "cluster \"" + cluster_name + "\"";
  KINFORMER_TRY_ASSIGN(config.server, r->string_field(cluster, "server", cluster_where));
  if (config.server.empty())
    return r->fail(cluster_where + ": server is missing");
  if (auto ep = parse_server_url(config.server); !ep)
    return r->fail(cluster_where + ": " + ep.err().message);
  while (config.server.ends_with('/'))
    config.server.pop_back();
  KINFORMER_TRY_ASSIGN(config.ca_file,
                       r->path_field(cluster, "certificate-authority", cluster_where));
  KINFORMER_TRY_ASSIGN(config.ca_data,
                       r->base64_field(cluster, "certificate-authority-data", cluster_where));
  KINFORMER_TRY_ASSIGN(config.insecure_skip_tls_verify,
                       r->bool_field(cluster, "insecure-skip-tls-verify", cluster_where));
  KINFORMER_TRY_ASSIGN(config.tls_server_name,
                       r->string_field(cluster, "tls-server-name", cluster_where));
  KINFORMER_TRY_ASSIGN(config.proxy_url, r->string_field(cluster, "proxy-url", cluster_where));

  // A context may name no user: the connection is then anonymous.
  if (user_name.empty())
    return config;
  KINFORMER_TRY_ASSIGN(found, first_entry(files, "users", "user", user_name));
  const YAML::Node user = found.first;
  r = found.second;
  const std::string user_where = "user \"" + user_name + "\"";
  if (const YAML::Node exec = user["exec"]; exec && !exec.IsNull()) {
    KINFORMER_TRY_ASSIGN(config.exec, read_exec(*r, exec, user_where + ": exec"));
  }
  if (user["auth-provider"])
    return r->fail(user_where + ": auth-provider plugins are not supported");
  if (user["username"] || user["password"])
    return r->fail(user_where + ": basic authentication (username/password) is not supported");
  KINFORMER_TRY_ASSIGN(config.token, r->string_field(user, "token", user_where));
  KINFORMER_TRY_ASSIGN(config.token_file, r->path_field(user, "tokenFile", user_where));
  KINFORMER_TRY_ASSIGN(config.client_cert_file,
                       r->path_field(user, "client-certificate", user_where));
  KINFORMER_TRY_ASSIGN(config.client_cert_data,
                       r->base64_field(user, "client-certificate-data", user_where));
  KINFORMER_TRY_ASSIGN(config.client_key_file, r->path_field(user, "client-key", user_where));
  KINFORMER_TRY_ASSIGN(config.client_key_data,
                       r->base64_field(user, "client-key-data", user_where));
  const bool has_cert = !config.client_cert_file.empty() || !config.client_cert_data.empty();
  const bool has_key = !config.client_key_file.empty() || !config.client_key_data.empty();
  if (has_cert != has_key)
    return r->fail(user_where + ": a client certificate needs both client-certificate and " +
                   "client-key");
  return config;
}

#undef KINFORMER_TRY_ASSIGN

} // namespace

result<connection_config> load_kubeconfig(const std::string& path, std::string_view context) {
  return load_kubeconfig(std::vector<std::string>{path}, context);
}

result<connection_config> load_kubeconfig(const std::vector<std::string>& paths,
                                          std::string_view context) {
  std::vector<kubeconfig_file> files;
  files.reserve(paths.size());
  for (const auto& path : paths) {
    auto text = read_file(path, "kubeconfig");
    if (!text)
      return std::move(text).err();
    kubeconfig_reader reader(path);
    try {
      YAML::Node root = YAML::Load(*text);
      // An empty file is an empty config (kubectl accepts one).
      if (root.IsNull())
        root = YAML::Node(YAML::NodeType::Map);
      if (!root.IsMap())
        return reader.fail("the document is not a map");
      // Every file is checked whole, as client-go decodes each one before merging.
      for (const char* list_key : {"clusters", "contexts", "users"}) {
        const YAML::Node list = root[list_key];
        if (list && !list.IsNull() && !list.IsSequence())
          return reader.fail(std::string(list_key) + " must be a list");
        if (list && list.IsSequence())
          for (const auto& entry : list)
            if (!entry.IsMap())
              return reader.fail(std::string(list_key) + " entries must be maps");
      }
      files.push_back(kubeconfig_file{std::move(reader), std::move(root)});
    } catch (const YAML::Exception& e) {
      return reader.fail(std::string("not valid YAML: ") + e.what());
    }
  }
  if (files.empty())
    return make_error(errc::not_found, "no kubeconfig file to load");
  return read_kubeconfig(files, context);
}

std::vector<std::string> kubeconfig_search_paths(std::string_view kubeconfig_env,
                                                 std::string_view home) {
  std::vector<std::string> out;
  if (!kubeconfig_env.empty()) {
    // Every existing file, in order, each once (client-go skips missing ones).
    std::size_t at = 0;
    while (at <= kubeconfig_env.size()) {
      const std::size_t colon = std::min(kubeconfig_env.find(':', at), kubeconfig_env.size());
      const std::string path(kubeconfig_env.substr(at, colon - at));
      std::error_code ec;
      if (!path.empty() && std::find(out.begin(), out.end(), path) == out.end() &&
          std::filesystem::is_regular_file(path, ec))
        out.push_back(path);
      at = colon + 1;
    }
    return out;
  }
  if (!home.empty()) {
    const std::string path = (std::filesystem::path(home) / ".kube" / "config").string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec))
      out.push_back(path);
  }
  return out;
}

std::vector<std::string> kubeconfig_search_paths() {
  const char* env = std::getenv("KUBECONFIG");
  const char* home = std::getenv("HOME");
  return kubeconfig_search_paths(env ? env : "", home ? home : "");
}

} // namespace kinformer
