#include "app/apiserver/table_printer.hpp"

#include "protocol/json_string.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <optional>
#include <vector>

namespace json = boost::json;

namespace kinformer::apiserver {

namespace {

// An object's tree for one row, allocated from a buffer on the stack (and beyond it, from blocks
// freed together): a row reads a few fields of a tree it drops at once, so nothing in it is worth
// allocating or freeing one by one.
class row_tree {
public:
  explicit row_tree(const object& obj) : value_(obj.tree(&resource_)) {}
  row_tree(const row_tree&) = delete;
  row_tree& operator=(const row_tree&) = delete;
  const json::value& value() const noexcept { return value_; }

private:
  unsigned char buffer_[16384];
  json::monotonic_resource resource_{buffer_, sizeof buffer_};
  json::value value_;
};

// ---- reading the tree ----

const json::value* at(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* v = &root;
  for (auto key : path) {
    const auto* o = v->if_object();
    if (!o)
      return nullptr;
    auto it = o->find(key);
    if (it == o->end())
      return nullptr;
    v = &it->value();
  }
  return v;
}

std::string_view str(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* v = at(root, path);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

std::int64_t integer(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* v = at(root, path);
  if (!v)
    return 0;
  if (v->is_int64())
    return v->get_int64();
  if (v->is_uint64())
    return static_cast<std::int64_t>(v->get_uint64());
  return 0;
}

const json::array& array(const json::value& root, std::initializer_list<std::string_view> path) {
  static const json::array empty;
  const json::value* v = at(root, path);
  return v && v->is_array() ? v->get_array() : empty;
}

std::size_t members(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* v = at(root, path);
  return v && v->is_object() ? v->get_object().size() : 0;
}

// ---- writing cells ----

struct cells {
  std::string& out;
  bool first = true;

  void sep() {
    out += first ? "" : ",";
    first = false;
  }
  cells& text(std::string_view s) {
    sep();
    append_json_string(out, s);
    return *this;
  }
  cells& text_or_none(std::string_view s) { return text(s.empty() ? "<none>" : s); }
  cells& number(std::int64_t n) {
    sep();
    out += std::to_string(n);
    return *this;
  }
};

std::string join(const std::vector<std::string>& parts, std::string_view separator = ",") {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty())
      out += separator;
    out += p;
  }
  return out;
}

// metav1.LabelSelector as LabelSelectorAsSelector(...).String() prints it: requirements sorted
// by key; "" for none.
std::string selector_text(const json::value* selector) {
  if (!selector || !selector->is_object())
    return "";
  std::vector<std::pair<std::string, std::string>> terms; // key, requirement
  if (const auto* labels = at(*selector, {"matchLabels"}); labels && labels->is_object())
    for (const auto& [k, v] : labels->get_object())
      if (v.is_string())
        terms.emplace_back(k, std::string(k) + "=" + std::string(v.get_string()));
  for (const auto& e : array(*selector, {"matchExpressions"})) {
    std::string key(str(e, {"key"})), op(str(e, {"operator"}));
    std::vector<std::string> values;
    for (const auto& v : array(e, {"values"}))
      if (v.is_string())
        values.emplace_back(v.get_string());
    std::sort(values.begin(), values.end());
    if (op == "In")
      terms.emplace_back(key, key + " in (" + join(values) + ")");
    else if (op == "NotIn")
      terms.emplace_back(key, key + " notin (" + join(values) + ")");
    else if (op == "Exists")
      terms.emplace_back(key, key);
    else if (op == "DoesNotExist")
      terms.emplace_back(key, "!" + key);
  }
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> texts;
  for (auto& [key, text] : terms)
    texts.push_back(std::move(text));
  return join(texts);
}

// A Service's spec.selector (a plain map), as labels.SelectorFromSet prints it.
std::string map_selector_text(const json::value* selector) {
  std::vector<std::string> terms;
  if (selector && selector->is_object())
    for (const auto& [k, v] : selector->get_object())
      if (v.is_string())
        terms.push_back(std::string(k) + "=" + std::string(v.get_string()));
  std::sort(terms.begin(), terms.end());
  return terms.empty() ? "<none>" : join(terms);
}

// ---- column definitions ----

struct column {
  std::string_view name, type;
  int priority = 0;
  std::string_view description;
  std::string_view format = "";
};

const column name_column{"Name", "string", 0, "Name must be unique within a namespace.", "name"};
const column age_column{"Age", "string", 0,
                        "CreationTimestamp is a timestamp representing the server time when this "
                        "object was created."};

std::string columns_json(std::initializer_list<column> columns) {
  json::array out;
  for (const auto& c : columns)
    out.push_back(json::object{{"name", c.name},
                               {"type", c.type},
                               {"format", c.format},
                               {"description", c.description},
                               {"priority", c.priority}});
  return json::serialize(out);
}

// ---- timestamps ----

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  if (text.size() < 20)
    return std::nullopt;
  std::string s(text);
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != 19)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::size_t at = 19;
  if (at < s.size() && s[at] == '.')
    for (++at; at < s.size() && s[at] >= '0' && s[at] <= '9'; ++at)
      ;
  long offset = 0;
  if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    int h = 0, m = 0;
    if (std::sscanf(s.c_str() + at + 1, "%2d:%2d", &h, &m) != 2)
      return std::nullopt;
    offset = (s[at] == '+' ? 1 : -1) * (h * 3600L + m * 60L);
  } else if (at >= s.size() || (s[at] != 'Z' && s[at] != 'z')) {
    return std::nullopt;
  }
  const std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1))
    return std::nullopt;
  return std::chrono::system_clock::from_time_t(t - offset);
}

std::string human_duration(std::chrono::system_clock::duration d) {
  using namespace std::chrono;
  const auto total = duration_cast<seconds>(d).count();
  if (total < -1)
    return "<invalid>";
  if (total < 0)
    return "0s";
  if (total < 60 * 2)
    return std::to_string(total) + "s";
  const auto minutes = total / 60;
  if (minutes < 10) {
    const auto s = total % 60;
    return std::to_string(minutes) + "m" + (s == 0 ? "" : std::to_string(s) + "s");
  }
  if (minutes < 60 * 3)
    return std::to_string(minutes) + "m";
  const auto hours = total / 3600;
  if (hours < 8) {
    const auto m = minutes % 60;
    return std::to_string(hours) + "h" + (m == 0 ? "" : std::to_string(m) + "m");
  }
  if (hours < 48)
    return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    const auto h = hours % 24;
    return std::to_string(hours / 24) + "d" + (h == 0 ? "" : std::to_string(h) + "h");
  }
  if (hours < 24 * 365 * 2)
    return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const auto days = (hours / 24) % 365;
    return std::to_string(hours / 24 / 365) + "y" + (days == 0 ? "" : std::to_string(days) + "d");
  }
  return std::to_string(hours / 24 / 365) + "y";
}

// ---- the printers ----

bool condition_true(const json::value& obj, std::string_view type) {
  for (const auto& c : array(obj, {"status", "conditions"}))
    if (str(c, {"type"}) == type)
      return str(c, {"status"}) == "True";
  return false;
}

// printPod: READY, STATUS (the phase, or the reason a container is waiting or terminated) and
// RESTARTS, as the API server computes them.
void pod_cells(const object& pod, std::chrono::system_clock::time_point now, std::string& out) {
  using time_point = std::chrono::system_clock::time_point;
  const row_tree row(pod);
  const json::value& tree = row.value();
  std::size_t total = array(tree, {"spec", "containers"}).size();
  std::int64_t restarts = 0, sidecar_restarts = 0, ready = 0;
  std::optional<time_point> last_restart, last_sidecar_restart;
  auto note_restart = [](const json::value& status, std::optional<time_point>& last) {
    if (auto t = parse_rfc3339(str(status, {"lastState", "terminated", "finishedAt"})))
      if (!last || *t > *last)
        last = t;
  };
  std::string reason(str(tree, {"status", "phase"}));
  if (auto r = str(tree, {"status", "reason"}); !r.empty())
    reason = r;
  for (const auto& c : array(tree, {"status", "conditions"}))
    if (str(c, {"type"}) == "PodScheduled" && str(c, {"reason"}) == "SchedulingGated")
      reason = "SchedulingGated";

  // Init containers with restartPolicy Always are sidecars: they count among the containers and
  // are ready once started.
  const auto& init_containers = array(tree, {"spec", "initContainers"});
  std::vector<std::string_view> sidecars;
  for (const auto& c : init_containers)
    if (str(c, {"restartPolicy"}) == "Always") {
      sidecars.push_back(str(c, {"name"}));
      ++total;
    }
  auto is_sidecar = [&](const json::value& status) {
    return std::find(sidecars.begin(), sidecars.end(), str(status, {"name"})) != sidecars.end();
  };

  bool initializing = false;
  const auto& init_statuses = array(tree, {"status", "initContainerStatuses"});
  for (std::size_t i = 0; i < init_statuses.size(); ++i) {
    const auto& c = init_statuses[i];
    restarts += integer(c, {"restartCount"});
    note_restart(c, last_restart);
    const bool sidecar = is_sidecar(c);
    if (sidecar) {
      sidecar_restarts += integer(c, {"restartCount"});
      note_restart(c, last_sidecar_restart);
    }
    const json::value* terminated = at(c, {"state", "terminated"});
    auto flag = [&](std::string_view field) {
      const json::value* v = at(c, {field});
      return v && v->is_bool() && v->get_bool();
    };
    if (terminated && integer(*terminated, {"exitCode"}) == 0)
      continue;
    if (sidecar && flag("started")) {
      ready += flag("ready") ? 1 : 0;
      continue;
    }
    initializing = true;
    if (terminated) {
      auto r = str(*terminated, {"reason"});
      if (!r.empty())
        reason = "Init:" + std::string(r);
      else if (auto sig = integer(*terminated, {"signal"}); sig != 0)
        reason = "Init:Signal:" + std::to_string(sig);
      else
        reason = "Init:ExitCode:" + std::to_string(integer(*terminated, {"exitCode"}));
    } else if (auto w = str(c, {"state", "waiting", "reason"});
               !w.empty() && w != "PodInitializing") {
      reason = "Init:" + std::string(w);
    } else {
      reason = "Init:" + std::to_string(i) + "/" + std::to_string(init_containers.size());
    }
    break;
  }
  if (!initializing || condition_true(tree, "Initialized")) {
    restarts = sidecar_restarts;
    last_restart = last_sidecar_restart;
    bool running = false;
    const auto& statuses = array(tree, {"status", "containerStatuses"});
    for (std::size_t i = statuses.size(); i-- > 0;) {
      const auto& c = statuses[i];
      restarts += integer(c, {"restartCount"});
      note_restart(c, last_restart);
      const json::value* terminated = at(c, {"state", "terminated"});
      if (auto w = str(c, {"state", "waiting", "reason"}); !w.empty()) {
        reason = w;
      } else if (terminated && !str(*terminated, {"reason"}).empty()) {
        reason = str(*terminated, {"reason"});
      } else if (terminated) {
        if (auto sig = integer(*terminated, {"signal"}); sig != 0)
          reason = "Signal:" + std::to_string(sig);
        else
          reason = "ExitCode:" + std::to_string(integer(*terminated, {"exitCode"}));
      } else if (const json::value* r = at(c, {"ready"});
                 r && r->is_bool() && r->get_bool() && at(c, {"state", "running"})) {
        running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && running)
      reason = condition_true(tree, "Ready") ? "Running" : "NotReady";
  }
  const std::string_view phase = str(tree, {"status", "phase"});
  if (!pod.meta().deletion_timestamp.empty()) {
    if (str(tree, {"status", "reason"}) == "NodeLost")
      reason = "Unknown";
    else if (phase != "Succeeded" && phase != "Failed")
      reason = "Terminating";
  }
  std::string restarts_text = std::to_string(restarts);
  if (restarts != 0 && last_restart)
    restarts_text += " (" + human_duration(now - *last_restart) + " ago)";

  std::string gates = "<none>";
  if (const auto& readiness = array(tree, {"spec", "readinessGates"}); !readiness.empty()) {
    std::size_t passed = 0;
    for (const auto& g : readiness)
      passed += condition_true(tree, str(g, {"conditionType"})) ? 1 : 0;
    gates = std::to_string(passed) + "/" + std::to_string(readiness.size());
  }
  cells c{out};
  c.text(pod.meta().name)
      .text(std::to_string(ready) + "/" + std::to_string(total))
      .text(reason)
      .text(restarts_text)
      .text(human_age(str(tree, {"metadata", "creationTimestamp"}), now))
      .text_or_none(str(tree, {"status", "podIP"}))
      .text_or_none(str(tree, {"spec", "nodeName"}))
      .text_or_none(str(tree, {"status", "nominatedNodeName"}))
      .text(gates);
}

void deployment_cells(const object& d, std::chrono::system_clock::time_point now,
                      std::string& out) {
  const row_tree row(d);
  const json::value& tree = row.value();
  std::vector<std::string> names, images;
  for (const auto& c : array(tree, {"spec", "template", "spec", "containers"})) {
    names.emplace_back(str(c, {"name"}));
    images.emplace_back(str(c, {"image"}));
  }
  const json::value* replicas = at(tree, {"spec", "replicas"});
  const std::int64_t desired = replicas ? integer(tree, {"spec", "replicas"}) : 1;
  cells c{out};
  c.text(d.meta().name)
      .text(std::to_string(integer(tree, {"status", "readyReplicas"})) + "/" +
            std::to_string(desired))
      .number(integer(tree, {"status", "updatedReplicas"}))
      .number(integer(tree, {"status", "availableReplicas"}))
      .text(human_age(str(tree, {"metadata", "creationTimestamp"}), now))
      .text(join(names))
      .text(join(images))
      .text(selector_text(at(tree, {"spec", "selector"})));
}

void configmap_cells(const object& cm, std::chrono::system_clock::time_point now,
                     std::string& out) {
  const row_tree row(cm);
  const json::value& tree = row.value();
  cells c{out};
  c.text(cm.meta().name)
      .number(static_cast<std::int64_t>(members(tree, {"data"}) + members(tree, {"binaryData"})))
      .text(human_age(str(tree, {"metadata", "creationTimestamp"}), now));
}

void secret_cells(const object& s, std::chrono::system_clock::time_point now, std::string& out) {
  const row_tree row(s);
  const json::value& tree = row.value();
  cells c{out};
  c.text(s.meta().name)
      .text(str(tree, {"type"}))
      .number(static_cast<std::int64_t>(members(tree, {"data"})))
      .text(human_age(str(tree, {"metadata", "creationTimestamp"}), now));
}

void namespace_cells(const object& ns, std::chrono::system_clock::time_point now,
                     std::string& out) {
  const row_tree row(ns);
  const json::value& tree = row.value();
  cells c{out};
  c.text(ns.meta().name)
      .text(str(tree, {"status", "phase"}))
      .text(human_age(str(tree, {"metadata", "creationTimestamp"}), now));
}

std::string service_external_ip(const json::value& tree, std::string_view type) {
  std::vector<std::string> ips;
  for (const auto& ip : array(tree, {"spec", "externalIPs"}))
    if (ip.is_string())
      ips.emplace_back(ip.get_string());
  if (type == "ClusterIP" || type.empty() || type == "NodePort")
    return ips.empty() ? "<none>" : join(ips);
  if (type == "LoadBalancer") {
    std::vector<std::string> lb;
    for (const auto& ingress : array(tree, {"status", "loadBalancer", "ingress"})) {
      if (auto ip = str(ingress, {"ip"}); !ip.empty())
        lb.emplace_back(ip);
      else if (auto host = str(ingress, {"hostname"}); !host.empty())
        lb.emplace_back(host);
    }
    lb.insert(lb.end(), ips.begin(), ips.end());
    std::sort(lb.begin(), lb.end()); // a sorted set, as the API server prints it
    lb.erase(std::unique(lb.begin(), lb.end()), lb.end());
    return lb.empty() ? "<pending>" : join(lb);
  }
  if (type == "ExternalName")
    return std::string(str(tree, {"spec", "externalName"}));
  return "<unknown>";
}

void service_cells(const object& svc, std::chrono::system_clock::time_point now, std::string& out) {
  const row_tree row(svc);
  const json::value& tree = row.value();
  const std::string_view type = str(tree, {"spec", "type"});
  std::vector<std::string> ports;
  for (const auto& p : array(tree, {"spec", "ports"})) {
    std::string protocol(str(p, {"protocol"}));
    std::string port = std::to_string(integer(p, {"port"}));
    if (auto node_port = integer(p, {"nodePort"}); node_port != 0)
      port += ":" + std::to_string(node_port);
    ports.push_back(port + "/" + (protocol.empty() ? "TCP" : protocol));
  }
  std::string cluster_ip(str(tree, {"spec", "clusterIP"}));
  if (const auto& ips = array(tree, {"spec", "clusterIPs"}); !ips.empty() && ips[0].is_string())
    cluster_ip = ips[0].get_string();
  cells c{out};
  c.text(svc.meta().name)
      .text(type.empty() ? "ClusterIP" : type)
      .text_or_none(cluster_ip)
      .text(service_external_ip(tree, type))
      .text(ports.empty() ? "<none>" : join(ports))
      .text(human_age(str(tree, {"metadata", "creationTimestamp"}), now))
      .text(map_selector_text(at(tree, {"spec", "selector"})));
}

void node_cells(const object& node, std::chrono::system_clock::time_point now, std::string& out) {
  const row_tree row(node);
  const json::value& tree = row.value();
  std::string ready_status = "Unknown"; // the last Ready condition decides
  for (const auto& c : array(tree, {"status", "conditions"}))
    if (str(c, {"type"}) == "Ready")
      ready_status = str(c, {"status"}) == "True" ? "Ready" : "NotReady";
  std::vector<std::string> status{ready_status};
  if (const json::value* u = at(tree, {"spec", "unschedulable"});
      u && u->is_bool() && u->get_bool())
    status.push_back("SchedulingDisabled");
  std::vector<std::string> roles;
  constexpr std::string_view role_prefix = "node-role.kubernetes.io/";
  for (const auto& [key, value] : node.meta().labels) {
    if (key.starts_with(role_prefix) && key.size() > role_prefix.size())
      roles.emplace_back(key.substr(role_prefix.size()));
    else if (key == "kubernetes.io/role" && !value.empty())
      roles.emplace_back(value);
  }
  std::sort(roles.begin(), roles.end());
  roles.erase(std::unique(roles.begin(), roles.end()), roles.end());
  auto address = [&](std::string_view type) {
    for (const auto& a : array(tree, {"status", "addresses"}))
      if (str(a, {"type"}) == type)
        return std::string(str(a, {"address"}));
    return std::string("<none>");
  };
  auto info = [&](std::string_view field) {
    auto v = str(tree, {"status", "nodeInfo", field});
    return v.empty() ? std::string("<unknown>") : std::string(v);
  };
  cells c{out};
  c.text(node.meta().name)
      .text(join(status))
      .text(roles.empty() ? "<none>" : join(roles))
      .text(human_age(str(tree, {"metadata", "creationTimestamp"}), now))
      .text(str(tree, {"status", "nodeInfo", "kubeletVersion"}))
      .text(address("InternalIP"))
      .text(address("ExternalIP"))
      .text(info("osImage"))
      .text(info("kernelVersion"))
      .text(info("containerRuntimeVersion"));
}

} // namespace

std::string human_age(std::string_view rfc3339, std::chrono::system_clock::time_point now) {
  auto t = parse_rfc3339(rfc3339);
  if (!t)
    return "<unknown>";
  return human_duration(now - *t);
}

const table_printer* printer_for(std::string_view group, std::string_view kind) {
  // The API server's columns (printers.go), their descriptions shortened from the API's docs.
  static const table_printer pods{
      columns_json(
          {name_column,
           {"Ready", "string", 0,
            "The aggregate readiness state of this pod for accepting traffic."},
           {"Status", "string", 0, "The aggregate status of the containers in this pod."},
           {"Restarts", "string", 0,
            "The number of times the containers in this pod have been restarted and when the "
            "last container in this pod has restarted."},
           age_column,
           {"IP", "string", 1, "IP address allocated to the pod."},
           {"Node", "string", 1, "NodeName is the node the pod is scheduled onto."},
           {"Nominated Node", "string", 1,
            "nominatedNodeName is set when this pod preempts other pods on the node."},
           {"Readiness Gates", "string", 1,
            "If specified, all readiness gates will be evaluated for pod readiness."}}),
      pod_cells};
  static const table_printer deployments{
      columns_json({name_column,
                    {"Ready", "string", 0, "Number of the pod with ready state"},
                    {"Up-to-date", "integer", 0,
                     "Total number of non-terminated pods targeted by this deployment that have "
                     "the desired template spec."},
                    {"Available", "integer", 0,
                     "Total number of available pods (ready for at least minReadySeconds) "
                     "targeted by this deployment."},
                    age_column,
                    {"Containers", "string", 1, "Names of each container in the template."},
                    {"Images", "string", 1, "Images referenced by each container in the template."},
                    {"Selector", "string", 1,
                     "Label selector for pods. Existing ReplicaSets whose pods are selected by "
                     "this will be the ones affected by this deployment."}}),
      deployment_cells};
  static const table_printer configmaps{
      columns_json({name_column,
                    {"Data", "string", 0, "Data contains the configuration data."},
                    age_column}),
      configmap_cells};
  static const table_printer secrets{
      columns_json(
          {name_column,
           {"Type", "string", 0, "Used to facilitate programmatic handling of secret data."},
           {"Data", "string", 0, "Data contains the secret data."},
           age_column}),
      secret_cells};
  static const table_printer namespaces{
      columns_json(
          {name_column, {"Status", "string", 0, "The status of the namespace"}, age_column}),
      namespace_cells};
  static const table_printer services{
      columns_json(
          {name_column,
           {"Type", "string", 0, "type determines how the Service is exposed."},
           {"Cluster-IP", "string", 0,
            "clusterIP is the IP address of the service and is usually assigned randomly."},
           {"External-IP", "string", 0,
            "externalIPs is a list of IP addresses for which nodes in the cluster will also "
            "accept traffic for this service."},
           {"Port(s)", "string", 0, "The list of ports that are exposed by this service."},
           age_column,
           {"Selector", "string", 1,
            "Route service traffic to pods with label keys and values matching this selector."}}),
      service_cells};
  static const table_printer nodes{
      columns_json(
          {name_column,
           {"Status", "string", 0, "The status of the node"},
           {"Roles", "string", 0, "The roles of the node"},
           age_column,
           {"Version", "string", 0, "Kubelet Version reported by the node."},
           {"Internal-IP", "string", 1, "List of addresses reachable to the node."},
           {"External-IP", "string", 1, "List of addresses reachable to the node."},
           {"OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release."},
           {"Kernel-Version", "string", 1, "Kernel Version reported by the node from uname -r."},
           {"Container-Runtime", "string", 1,
            "ContainerRuntime Version reported by the node through runtime remote API."}}),
      node_cells};
  if (group == "apps")
    return kind == "Deployment" ? &deployments : nullptr;
  if (!group.empty())
    return nullptr;
  if (kind == "Pod")
    return &pods;
  if (kind == "ConfigMap")
    return &configmaps;
  if (kind == "Secret")
    return &secrets;
  if (kind == "Namespace")
    return &namespaces;
  if (kind == "Service")
    return &services;
  if (kind == "Node")
    return &nodes;
  return nullptr;
}

} // namespace kinformer::apiserver
