#include "app/kubesim/object_generator.hpp"

#include "app/kubesim/storage.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <ctime>

namespace json = boost::json;

namespace kinformer::sim {

std::uint64_t random_source::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string random_source::name_suffix(std::size_t length) {
  // k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits.
  static constexpr std::string_view alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out(length, ' ');
  for (auto& c : out)
    c = alphabet[below(alphabet.size())];
  return out;
}

namespace {

constexpr std::array app_names = {"web",     "api",     "cache",   "worker", "auth",
                                  "search",  "billing", "gateway", "ingest", "notifier",
                                  "catalog", "orders",  "reports", "media",  "scheduler"};
constexpr std::array tiers = {"frontend", "backend", "cache", "batch"};
constexpr std::array env_words = {"LOG_LEVEL",     "DATABASE_URL", "REDIS_HOST", "FEATURE_FLAGS",
                                  "OTEL_ENDPOINT", "REGION",       "CACHE_TTL",  "MAX_CONNECTIONS",
                                  "UPSTREAM_URL",  "TIMEOUT",      "QUEUE_NAME", "SENTRY_DSN"};
constexpr std::size_t node_count = 64;

std::string hex(random_source& r, std::size_t length) {
  static constexpr std::string_view digits = "0123456789abcdef";
  std::string out(length, ' ');
  for (auto& c : out)
    c = digits[r.below(16)];
  return out;
}

std::string make_uid(random_source& r) {
  return hex(r, 8) + "-" + hex(r, 4) + "-4" + hex(r, 3) + "-a" + hex(r, 3) + "-" + hex(r, 12);
}

std::string alnum(random_source& r, std::size_t length) {
  static constexpr std::string_view chars = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out(length, ' ');
  for (auto& c : out)
    c = chars[r.below(chars.size())];
  return out;
}

std::string ip(std::string_view prefix, std::uint64_t a, std::uint64_t b) {
  return std::string(prefix) + std::to_string(a % 256) + "." + std::to_string(1 + b % 254);
}

json::object condition(std::string_view type, std::string_view status, const std::string& when) {
  return json::object{
      {"type", type}, {"status", status}, {"lastProbeTime", nullptr}, {"lastTransitionTime", when}};
}

json::object http_probe(std::string_view path, int port, int initial_delay, int period) {
  return json::object{{"httpGet", json::object{{"path", path}, {"port", port}, {"scheme", "HTTP"}}},
                      {"initialDelaySeconds", initial_delay},
                      {"periodSeconds", period},
                      {"timeoutSeconds", 1},
                      {"successThreshold", 1},
                      {"failureThreshold", 3}};
}

// The key structured-merge-diff uses for an item of an associative list, if it has one.
std::optional<std::string> list_item_key(const json::object& item) {
  if (auto it = item.find("uid"); it != item.end())
    return "k:" + json::serialize(json::object{{"uid", it->value()}});
  if (auto it = item.find("containerPort"); it != item.end())
    return "k:" + json::serialize(json::object{
                      {"containerPort", it->value()},
                      {"protocol", item.contains("protocol") ? item.at("protocol") : "TCP"}});
  for (std::string_view field : {"mountPath", "type", "ip", "name"})
    if (auto it = item.find(field); it != item.end())
      return "k:" + json::serialize(json::object{{field, it->value()}});
  return std::nullopt;
}

// Lists the API server treats as atomic (no per-item entries).
bool is_atomic_list(std::string_view field) {
  return field == "containerStatuses" || field == "tolerations" || field == "sources";
}

json::object fields_of_object(const json::object& o, bool owned_as_whole, int depth) {
  json::object out;
  if (owned_as_whole)
    out["."] = json::object{};
  for (const auto& kv : o) {
    std::string key = "f:" + std::string(kv.key());
    const json::value& v = kv.value();
    if (depth <= 1) {
      out[key] = json::object{};
    } else if (v.is_object() && !v.get_object().empty()) {
      out[key] = fields_of_object(v.get_object(), true, depth - 1);
    } else if (v.is_array() && !v.get_array().empty() && v.get_array().front().is_object() &&
               !is_atomic_list(kv.key())) {
      json::object items{{".", json::object{}}};
      bool keyed = true;
      for (const auto& item : v.get_array()) {
        auto item_key = list_item_key(item.get_object());
        if (!item_key) {
          keyed = false; // an atomic list: owned as a whole
          break;
        }
        items[*item_key] = depth > 2
                               ? json::value(fields_of_object(item.get_object(), true, depth - 2))
                               : json::value(json::object{});
      }
      out[key] = keyed ? json::value(std::move(items)) : json::value(json::object{});
    } else {
      out[key] = json::object{};
    }
  }
  return out;
}

json::object managed_entry(std::string_view manager, const std::string& time, json::value fields,
                           const char* subresource) {
  json::object e{{"manager", manager}, {"operation", "Update"},    {"apiVersion", "v1"},
                 {"time", time},       {"fieldsType", "FieldsV1"}, {"fieldsV1", std::move(fields)}};
  if (subresource)
    e["subresource"] = subresource;
  return e;
}

} // namespace

json::value fields_v1_of(const json::value& value, int max_depth) {
  if (!value.is_object())
    return json::object{};
  return fields_of_object(value.get_object(), false, max_depth);
}

// One Deployment's current ReplicaSet: the pod template every pod of it is a copy of.
struct object_generator::workload {
  std::string replicaset_name;
  json::value pod_template; // a complete pod but for its name, node, IPs, times and container IDs
};

object_generator::object_generator(generator_options options)
    : options_(options), random_(options.seed) {}

object_generator::~object_generator() = default;

std::string object_generator::namespace_name(std::size_t index) {
  return index == 0 ? "default" : "ns-" + std::to_string(index);
}

std::string object_generator::timestamp(std::int64_t seconds_after_base) const {
  std::time_t t = std::chrono::system_clock::to_time_t(options_.clock_base) + seconds_after_base;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

object_generator::workload& object_generator::pick_workload(std::string_view ns) {
  auto it = workloads_.find(ns);
  if (it == workloads_.end()) {
    it = workloads_.emplace(std::string(ns), std::vector<std::unique_ptr<workload>>{}).first;
    std::size_t count = 3 + random_.below(4);
    for (std::size_t i = 0; i < count; ++i)
      it->second.push_back(std::make_unique<workload>(make_workload(ns)));
  }
  return *it->second[random_.below(it->second.size())];
}

namespace {

// Replaces the single "k:{"ip":...}" entry of a list's fieldsV1 (when it has one).
void rekey_ip_entry(json::object& fields, std::string_view list, const std::string& ip) {
  auto* entry = fields.if_contains(list);
  if (!entry || !entry->is_object())
    return;
  auto& items = entry->get_object();
  for (auto it = items.begin(); it != items.end(); ++it) {
    if (it->key().starts_with("k:")) {
      json::value item_fields = std::move(it->value());
      items.erase(it);
      items.emplace("k:{\"ip\":\"" + ip + "\"}", std::move(item_fields));
      return;
    }
  }
}

// Adds the two managedFields entries every running pod has: the ReplicaSet controller's (it
// created the pod from its template; the scheduler's nodeName is not its field) and the
// kubelet's (status). `depth` limits how deep they describe fields, for small pods.
void add_managed_fields(json::value& pod, int depth, const std::string& time) {
  auto& meta = pod.at("metadata").as_object();
  json::object meta_fields;
  for (const char* f : {"generateName", "labels", "annotations", "ownerReferences"})
    if (auto* v = meta.if_contains(f))
      meta_fields[std::string("f:") + f] =
          fields_v1_of(json::object{{f, *v}}, depth).as_object()[std::string("f:") + f];
  json::object spec = pod.at("spec").as_object();
  spec.erase("nodeName");
  json::object controller{{"f:metadata", std::move(meta_fields)},
                          {"f:spec", fields_v1_of(spec, depth)}};
  json::object kubelet{{"f:status", fields_v1_of(pod.at("status"), depth)}};
  meta["managedFields"] =
      json::array{managed_entry("kube-controller-manager", time, std::move(controller), nullptr),
                  managed_entry("kubelet", time, std::move(kubelet), "status")};
}

// Makes one pod from its workload's template: a copy with its own name, node, addresses, times
// and container IDs. The template carries complete managedFields; only the keys naming the pod's
// IPs and the times change.
struct pod_finisher {
  random_source& random;
  std::string created, started;
  std::size_t arena_bytes;

  json::value finish(const json::value& pod_template, const std::string& replicaset_name) {
    // One arena per pod: building a pod is hundreds of small allocations, freed all at once.
    json::value pod(pod_template,
                    json::make_shared_resource<json::monotonic_resource>(arena_bytes));
    auto& meta = pod.at("metadata").as_object();
    meta["name"] = replicaset_name + "-" + random.name_suffix(5);
    auto& spec = pod.at("spec").as_object();
    std::uint64_t node = random.below(node_count);
    spec["nodeName"] = "node-" + std::to_string(node);
    std::string host_ip = ip("10.0.", node, node * 7);
    std::string pod_ip = ip("10.244.", node, random.next());

    auto& status = pod.at("status").as_object();
    status["hostIP"] = host_ip;
    status["podIP"] = pod_ip;
    if (auto* list = status.if_contains("hostIPs"))
      list->as_array().front().as_object()["ip"] = host_ip;
    if (auto* list = status.if_contains("podIPs"))
      list->as_array().front().as_object()["ip"] = pod_ip;
    status["startTime"] = created;
    for (auto& c : status["conditions"].as_array())
      c.as_object()["lastTransitionTime"] = started;
    for (auto& cs : status["containerStatuses"].as_array()) {
      auto& o = cs.as_object();
      o["containerID"] = "containerd://" + hex(random, 64);
      o["state"].as_object()["running"].as_object()["startedAt"] = started;
    }

    auto& managed = meta["managedFields"].as_array();
    managed[0].as_object()["time"] = created;
    auto& kubelet = managed[1].as_object();
    kubelet["time"] = started;
    auto& status_fields = kubelet["fieldsV1"].as_object()["f:status"];
    if (status_fields.is_object()) {
      rekey_ip_entry(status_fields.get_object(), "f:hostIPs", host_ip);
      rekey_ip_entry(status_fields.get_object(), "f:podIPs", pod_ip);
    }
    return pod;
  }
};

// The optional parts of a pod, added in this order as the size target allows. Every pod has
// its image, resources, a status and both managedFields entries.
enum class detail : int {
  minimal = 0,
  all_conditions,        // five status conditions instead of Ready and PodScheduled
  tolerations,           // the two NoExecute tolerations admission adds
  ip_lists,              // status.hostIPs and status.podIPs
  service_account_token, // the projected kube-api-access volume and its mount
  readiness_probe,
  annotations,
  liveness_probe,
  config_volume, // a ConfigMap volume and its mount
  metrics_port,
  sidecar, // an envoy container (for 40% of workloads)
  full = sidecar,
};

bool has(detail level, detail feature) {
  return static_cast<int>(level) >= static_cast<int>(feature);
}

json::object container(std::string_view name, const std::string& image, int port,
                       std::string_view config_mount, std::string_view token_volume,
                       json::array env, detail level, bool with_probes) {
  json::array ports{json::object{{"name", "http"}, {"containerPort", port}, {"protocol", "TCP"}}};
  if (has(level, detail::metrics_port))
    ports.emplace_back(
        json::object{{"name", "metrics"}, {"containerPort", 9090}, {"protocol", "TCP"}});
  json::array mounts;
  if (has(level, detail::config_volume))
    mounts.emplace_back(
        json::object{{"name", "config"}, {"mountPath", config_mount}, {"readOnly", true}});
  if (has(level, detail::service_account_token))
    mounts.emplace_back(json::object{{"name", token_volume},
                                     {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                                     {"readOnly", true}});
  json::object c{
      {"name", name},
      {"image", image},
      {"imagePullPolicy", "IfNotPresent"},
      {"ports", std::move(ports)},
      {"resources", json::object{{"requests", json::object{{"cpu", "250m"}, {"memory", "256Mi"}}},
                                 {"limits", json::object{{"cpu", "1"}, {"memory", "512Mi"}}}}},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "File"}};
  if (!env.empty())
    c["env"] = std::move(env);
  if (!mounts.empty())
    c["volumeMounts"] = std::move(mounts);
  if (with_probes && has(level, detail::liveness_probe))
    c["livenessProbe"] = http_probe("/healthz", port, 10, 10);
  if (with_probes && has(level, detail::readiness_probe))
    c["readinessProbe"] = http_probe("/ready", port, 0, 5);
  return c;
}

json::object token_volume(const std::string& name) {
  json::array sources{
      json::object{
          {"serviceAccountToken", json::object{{"expirationSeconds", 3607}, {"path", "token"}}}},
      json::object{
          {"configMap", json::object{{"name", "kube-root-ca.crt"},
                                     {"items", json::array{json::object{{"key", "ca.crt"},
                                                                        {"path", "ca.crt"}}}}}}},
      json::object{
          {"downwardAPI",
           json::object{
               {"items", json::array{json::object{
                             {"path", "namespace"},
                             {"fieldRef", json::object{{"apiVersion", "v1"},
                                                       {"fieldPath", "metadata.namespace"}}}}}}}}}};
  return json::object{
      {"name", name},
      {"projected", json::object{{"sources", std::move(sources)}, {"defaultMode", 420}}}};
}

json::array tolerations() {
  json::array out;
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})
    out.emplace_back(json::object{
        {"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}});
  return out;
}

} // namespace

object_generator::workload object_generator::make_workload(std::string_view ns) {
  random_source& r = random_;
  std::string app = app_names[r.below(app_names.size())];
  std::string deployment_name = app + "-" + r.name_suffix(4);
  std::string hash = r.name_suffix(10);
  std::string version = "v1." + std::to_string(r.below(20)) + "." + std::to_string(r.below(10));
  std::string tier = tiers[r.below(tiers.size())];
  std::string image = "registry.example.com/" + std::string(ns) + "/" + app + ":" + version;
  std::string image_id =
      "registry.example.com/" + std::string(ns) + "/" + app + "@sha256:" + hex(r, 64);
  std::string token = "kube-api-access-" + r.name_suffix(5);
  bool sidecar = r.percent(40);
  std::string replicaset_name = deployment_name + "-" + hash;
  std::string replicaset_uid = make_uid(r);
  std::string restarted_at = timestamp(-86400);

  // Env vars carry the size target: each adds to the spec and to the managedFields entry.
  auto make_env = [&](std::size_t count, std::size_t last_value_length) {
    json::array env;
    for (std::size_t i = 0; i < count; ++i) {
      std::string name =
          std::string(env_words[i % env_words.size()]) + "_" + std::to_string(i / 12);
      std::size_t length = i + 1 == count ? last_value_length : 24;
      env.emplace_back(json::object{{"name", name}, {"value", alnum(r, length)}});
    }
    return env;
  };

  std::string proxy_image = "registry.example.com/platform/envoy:v1.29.2";
  std::string proxy_image_id = "registry.example.com/platform/envoy@sha256:" + hex(r, 64);

  auto make_template = [&](detail level, int depth, std::size_t env_count,
                           std::size_t last_value_length) {
    json::array containers{container(app, image, 8080, "/etc/" + app, token,
                                     make_env(env_count, last_value_length), level, true)};
    auto running = [] { return json::object{{"running", json::object{{"startedAt", ""}}}}; };
    json::array statuses{json::object{{"name", app},
                                      {"state", running()},
                                      {"lastState", json::object{}},
                                      {"ready", true},
                                      {"restartCount", 0},
                                      {"image", image},
                                      {"imageID", image_id},
                                      {"containerID", ""},
                                      {"started", true}}};
    if (sidecar && has(level, detail::sidecar)) {
      containers.emplace_back(
          container("envoy", proxy_image, 15001, "/etc/envoy", token, json::array{}, level, false));
      statuses.emplace_back(json::object{{"name", "envoy"},
                                         {"state", running()},
                                         {"lastState", json::object{}},
                                         {"ready", true},
                                         {"restartCount", 0},
                                         {"image", proxy_image},
                                         {"imageID", proxy_image_id},
                                         {"containerID", ""},
                                         {"started", true}});
    }
    json::object labels{{"app", app},
                        {"pod-template-hash", hash},
                        {"tier", tier},
                        {"version", version},
                        {"track", "stable"}};
    json::object meta{{"generateName", replicaset_name + "-"},
                      {"namespace", ns},
                      {"labels", labels},
                      {"ownerReferences", json::array{json::object{{"apiVersion", "apps/v1"},
                                                                   {"kind", "ReplicaSet"},
                                                                   {"name", replicaset_name},
                                                                   {"uid", replicaset_uid},
                                                                   {"controller", true},
                                                                   {"blockOwnerDeletion", true}}}}};
    if (has(level, detail::annotations))
      meta["annotations"] = json::object{{"kubectl.kubernetes.io/restartedAt", restarted_at},
                                         {"prometheus.io/scrape", "true"},
                                         {"prometheus.io/port", "9090"}};
    json::array volumes;
    if (has(level, detail::config_volume))
      volumes.emplace_back(json::object{
          {"name", "config"},
          {"configMap", json::object{{"name", app + "-config"}, {"defaultMode", 420}}}});
    if (has(level, detail::service_account_token))
      volumes.emplace_back(token_volume(token));
    json::object spec{{"containers", std::move(containers)},
                      {"restartPolicy", "Always"},
                      {"terminationGracePeriodSeconds", 30},
                      {"dnsPolicy", "ClusterFirst"},
                      {"serviceAccountName", app},
                      {"serviceAccount", app},
                      {"nodeName", ""},
                      {"securityContext", json::object{}},
                      {"schedulerName", "default-scheduler"},
                      {"priority", 0},
                      {"enableServiceLinks", true},
                      {"preemptionPolicy", "PreemptLowerPriority"}};
    if (!volumes.empty())
      spec["volumes"] = std::move(volumes);
    if (has(level, detail::tolerations))
      spec["tolerations"] = tolerations();
    json::array conditions;
    for (const char* type :
         {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"})
      if (has(level, detail::all_conditions) || type == std::string_view("Ready") ||
          type == std::string_view("PodScheduled"))
        conditions.emplace_back(condition(type, "True", ""));
    json::object status{{"phase", "Running"},
                        {"conditions", std::move(conditions)},
                        {"containerStatuses", std::move(statuses)},
                        {"qosClass", "Burstable"}};
    status["hostIP"] = "";
    status["podIP"] = "";
    if (has(level, detail::ip_lists)) {
      // Placeholders, set per pod.
      status["hostIPs"] = json::array{json::object{{"ip", ""}}};
      status["podIPs"] = json::array{json::object{{"ip", ""}}};
    }
    status["startTime"] = "";
    json::value pod = json::object{{"apiVersion", "v1"},
                                   {"kind", "Pod"},
                                   {"metadata", std::move(meta)},
                                   {"spec", std::move(spec)},
                                   {"status", std::move(status)}};
    add_managed_fields(pod, depth, timestamp(0));
    return pod;
  };

  // A separate stream for the measuring pods, so sizing does not shift the main sequence.
  random_source measure_random(r.next());
  auto measured_size = [&](const json::value& pod_template) {
    pod_finisher f{measure_random, timestamp(0), timestamp(0), 4 * options_.pod_bytes};
    return json::serialize(f.finish(pod_template, replicaset_name)).size() + server_fields_bytes;
  };

  // Size the template: take the first of these shapes that fits, richest first (all details
  // with complete managedFields; then shallower managedFields; then fewer details), then add env
  // vars (each adds to the spec and to managedFields) and pad the last env value.
  std::vector<std::pair<detail, int>> shapes{{detail::full, 64}, {detail::full, 6}};
  for (int level = static_cast<int>(detail::full); level >= 0; --level)
    shapes.emplace_back(static_cast<detail>(level), 4);
  shapes.emplace_back(detail::minimal, 2);
  shapes.emplace_back(detail::minimal, 1);

  constexpr std::size_t value_length = 24;
  const std::size_t target = options_.pod_bytes;
  detail level = detail::full;
  int depth = 64;
  std::size_t base = 0;
  for (const auto& [shape_level, shape_depth] : shapes) {
    level = shape_level;
    depth = shape_depth;
    base = measured_size(make_template(level, depth, 0, value_length));
    if (base <= target)
      break;
  }
  std::size_t env_count = 0, last_length = value_length;
  if (target > base) {
    std::size_t one = measured_size(make_template(level, depth, 1, value_length));
    std::size_t per_var = std::max<std::size_t>(one - base, 1);
    env_count = std::max<std::size_t>((target - base) / per_var, 1);
    std::size_t size = measured_size(make_template(level, depth, env_count, value_length));
    if (size < target)
      last_length += target - size;
    else if (size > target)
      last_length -= std::min(size - target, value_length - 1);
  }
  return workload{replicaset_name, make_template(level, depth, env_count, last_length)};
}

json::value object_generator::pod(std::string_view ns) {
  workload& w = pick_workload(ns);
  std::int64_t created = static_cast<std::int64_t>(sequence_++);
  pod_finisher f{random_, timestamp(created), timestamp(created + 3), 4 * options_.pod_bytes};
  return f.finish(w.pod_template, w.replicaset_name);
}

json::value object_generator::namespace_object(std::string_view name) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Namespace"},
      {"metadata", json::object{{"name", name},
                                {"labels", json::object{{"kubernetes.io/metadata.name", name}}}}},
      {"spec", json::object{{"finalizers", json::array{"kubernetes"}}}},
      {"status", json::object{{"phase", "Active"}}}};
}

json::value object_generator::config_map(std::string_view ns) {
  std::string app = app_names[random_.below(app_names.size())];
  json::object data;
  std::size_t keys = 2 + random_.below(5);
  for (std::size_t i = 0; i < keys; ++i)
    data[std::string(env_words[i])] = alnum(random_, 16 + random_.below(64));
  data["config.yaml"] = "server:\n  port: 8080\n  name: " + app + "\nlog:\n  level: info\n";
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", json::object{{"name", app + "-config-" + random_.name_suffix(5)},
                                {"namespace", ns},
                                {"labels", json::object{{"app", app}, {"track", "stable"}}}}},
      {"data", std::move(data)}};
}

json::value object_generator::deployment(std::string_view ns) {
  std::string app = app_names[random_.below(app_names.size())];
  std::string name = app + "-" + random_.name_suffix(4);
  std::string version = "v1." + std::to_string(random_.below(20)) + ".0";
  std::int64_t replicas = 1 + static_cast<std::int64_t>(random_.below(5));
  std::string image = "registry.example.com/" + std::string(ns) + "/" + app + ":" + version;
  json::object pod_labels{{"app", app}, {"version", version}};
  return json::object{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       json::object{{"name", name},
                    {"namespace", ns},
                    {"labels", json::object{{"app", app}, {"track", "stable"}}},
                    {"annotations", json::object{{"deployment.kubernetes.io/revision", "1"}}}}},
      {"spec",
       json::object{
           {"replicas", replicas},
           {"selector", json::object{{"matchLabels", json::object{{"app", app}}}}},
           {"strategy",
            json::object{
                {"type", "RollingUpdate"},
                {"rollingUpdate", json::object{{"maxUnavailable", "25%"}, {"maxSurge", "25%"}}}}},
           {"template",
            json::object{{"metadata", json::object{{"labels", pod_labels}}},
                         {"spec", json::object{{"containers", json::array{container(
                                                                  app, image, 8080, "/etc/" + app,
                                                                  "token", json::array{},
                                                                  detail::full, true)}}}}}}}},
      {"status", json::object{{"observedGeneration", 1},
                              {"replicas", replicas},
                              {"readyReplicas", replicas},
                              {"availableReplicas", replicas},
                              {"updatedReplicas", replicas}}}};
}

json::value object_generator::widget(std::string_view ns) {
  return json::object{
      {"apiVersion", "example.com/v1"},
      {"kind", "Widget"},
      {"metadata", json::object{{"name", "widget-" + random_.name_suffix(5)},
                                {"namespace", ns},
                                {"labels", json::object{{"app", "widgets"}, {"track", "stable"}}}}},
      {"spec", json::object{{"size", static_cast<std::int64_t>(1 + random_.below(10))},
                            {"color", random_.percent(50) ? "blue" : "green"}}},
      {"status", json::object{{"ready", true}}}};
}

json::value object_generator::cluster_widget() {
  return json::object{
      {"apiVersion", "example.com/v1"},
      {"kind", "ClusterWidget"},
      {"metadata", json::object{{"name", "clusterwidget-" + random_.name_suffix(5)},
                                {"labels", json::object{{"app", "widgets"}, {"track", "stable"}}}}},
      {"spec", json::object{{"size", static_cast<std::int64_t>(1 + random_.below(10))},
                            {"region", random_.percent(50) ? "eu" : "us"}}}};
}

void object_generator::change_labels(json::value& obj) {
  auto& meta = obj.as_object()["metadata"];
  if (!meta.is_object())
    meta = json::object{};
  auto& labels = meta.as_object()["labels"];
  if (!labels.is_object())
    labels = json::object{};
  auto& track = labels.as_object()["track"];
  track = (track.is_string() && track.get_string() == "canary") ? "stable" : "canary";
}

void object_generator::change_status(json::value& pod) {
  auto& status = pod.as_object()["status"];
  if (!status.is_object())
    status = json::object{};
  auto& s = status.as_object();
  auto& conditions = s["conditions"];
  if (!conditions.is_array())
    conditions = json::array{};
  auto is_type = [](const json::value& c, std::string_view type) {
    const auto* t = c.is_object() ? c.get_object().if_contains("type") : nullptr;
    return t && t->is_string() && t->get_string() == type;
  };
  auto& list = conditions.get_array();
  auto ready_it = std::find_if(list.begin(), list.end(),
                               [&](const json::value& c) { return is_type(c, "Ready"); });
  if (ready_it == list.end())
    ready_it = list.insert(list.end(), condition("Ready", "False", ""));
  // Readiness flips on every call, so each call is a real change (the server drops no-op
  // updates without an event).
  const auto* ready_status = ready_it->get_object().if_contains("status");
  bool ready = !(ready_status && ready_status->is_string() && ready_status->get_string() == "True");
  std::string now = timestamp(static_cast<std::int64_t>(sequence_++));
  for (auto& c : list) {
    if (is_type(c, "Ready") || is_type(c, "ContainersReady")) {
      c.get_object()["status"] = ready ? "True" : "False";
      c.get_object()["lastTransitionTime"] = now;
    }
  }
  if (auto* statuses = s.if_contains("containerStatuses"); statuses && statuses->is_array()) {
    for (auto& cs : statuses->get_array()) {
      if (!cs.is_object())
        continue;
      auto& o = cs.get_object();
      o["ready"] = ready;
      if (!ready) {
        auto& restarts = o["restartCount"];
        restarts = (restarts.is_int64() ? restarts.get_int64() : 0) + 1;
        o["lastState"] = json::object{
            {"terminated",
             json::object{{"exitCode", 137}, {"reason", "OOMKilled"}, {"finishedAt", now}}}};
      }
      o["state"] = json::object{{"running", json::object{{"startedAt", now}}}};
    }
  }
}

void object_generator::change_spec(json::value& obj) {
  auto& spec = obj.as_object()["spec"];
  if (!spec.is_object())
    spec = json::object{};
  auto& s = spec.as_object();
  // A tag never used before, so each call is a real change.
  std::string tag = "v2." + std::to_string(sequence_++) + "." + std::to_string(random_.below(10));
  // Pods carry containers in spec, Deployments in spec.template.spec.
  json::value* containers = s.if_contains("containers");
  std::error_code ignored;
  if (!containers)
    if (auto* pod_spec = obj.find_pointer("/spec/template/spec", ignored); pod_spec)
      containers =
          pod_spec->is_object() ? pod_spec->as_object().if_contains("containers") : nullptr;
  if (containers && containers->is_array() && !containers->get_array().empty() &&
      containers->get_array().front().is_object()) {
    auto& image = containers->get_array().front().as_object()["image"];
    std::string current = image.is_string() ? std::string(image.get_string()) : "image";
    image = current.substr(0, current.rfind(':')) + ":" + tag;
  } else {
    s["size"] = static_cast<std::int64_t>(1 + random_.below(10));
    s["revision"] = tag;
  }
}

resource_info widget_resource_info() {
  return resource_info{
      widgets_resource,
      "Widget",
      "widget",
      resource_scope::namespaced,
      {"wd"},
      {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
      {}};
}

resource_info cluster_widget_resource_info() {
  resource_info info = widget_resource_info();
  info.gvr = cluster_widgets_resource;
  info.kind = "ClusterWidget";
  info.singular = "clusterwidget";
  info.scope = resource_scope::cluster;
  info.short_names = {"cwd"};
  return info;
}

void register_example_resources(storage& store) {
  store.register_resource(widget_resource_info());
  store.register_resource(cluster_widget_resource_info());
}

result<load_summary> load_pods(storage& store, object_generator& generator, std::size_t pods,
                               std::size_t namespaces) {
  if (namespaces == 0 && pods > 0)
    return make_error(errc::invalid_argument, "cannot load pods into zero namespaces");
  load_summary summary;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < namespaces; ++i) {
    names.push_back(object_generator::namespace_name(i));
    auto created =
        store.create_value(namespaces_resource, "", generator.namespace_object(names.back()));
    if (created)
      ++summary.namespaces;
    else if (created.failure().code != 409)
      return make_error(errc::status, created.failure().describe());
  }
  for (std::size_t i = 0; i < pods; ++i) {
    const std::string& ns = names[i % namespaces];
    // A generated name can collide, as generateName's can: then try another.
    auto created = store.create_value(pods_resource, ns, generator.pod(ns));
    for (int retry = 0; !created && created.failure().code == 409 && retry < 3; ++retry)
      created = store.create_value(pods_resource, ns, generator.pod(ns));
    if (!created)
      return make_error(errc::status, created.failure().describe());
    ++summary.pods;
  }
  return summary;
}

} // namespace kinformer::sim
