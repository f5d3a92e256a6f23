#pragma once
// Realistic Kubernetes objects for the simulator: pods shaped like a real cluster's (generated
// names, owner references, managedFields, probes, status), plus configmaps, deployments,
// namespaces and two custom resources. Everything is deterministic from a seed, so a test can
// regenerate exactly what it loaded.
//
// Objects come back as JSON values without the fields the server sets on create (uid,
// resourceVersion, creationTimestamp, generation): they are what a client would POST.

#include "protocol/gvk.hpp"
#include "protocol/result.hpp"

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer::apiserver {
struct resource_info;
}

namespace kinformer::sim {

class storage;
using apiserver::resource_info;

// A small, fast, portable PRNG (splitmix64): the same seed gives the same sequence everywhere,
// unlike std:: distributions.
class random_source {
public:
  explicit random_source(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, n); n must be > 0.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // True with probability `percent` / 100.
  bool percent(unsigned percent) { return below(100) < percent; }
  // `length` characters from the alphabet Kubernetes uses for generated name suffixes.
  std::string name_suffix(std::size_t length);

private:
  std::uint64_t state_;
};

struct generator_options {
  std::uint64_t seed = 1;
  // Target size in bytes of a stored pod's JSON (including the fields the server adds). Pods land
  // within a few percent of it from about 2800 bytes up (the smallest realistic pod); smaller
  // targets give that smallest pod. Probes, volumes and a sidecar appear from about 6 KB, as
  // in real clusters.
  std::size_t pod_bytes = 3500;
  // Timestamps in generated objects count from here (a fixed instant by default, so output is
  // reproducible; kubesim passes the current time).
  std::chrono::system_clock::time_point clock_base =
      std::chrono::system_clock::time_point(std::chrono::seconds(1767225600)); // 2026-01-01
};

// Bytes the server adds to a created object (uid, resourceVersion, creationTimestamp): counted
// in the pod size target.
inline constexpr std::size_t server_fields_bytes = 120;

class object_generator {
public:
  explicit object_generator(generator_options options = {});
  ~object_generator();
  object_generator(const object_generator&) = delete;
  object_generator& operator=(const object_generator&) = delete;

  const generator_options& options() const noexcept { return options_; }
  random_source& random() noexcept { return random_; }

  // A Pod in `ns`, owned by one of the namespace's ReplicaSets (each namespace gets a few
  // workloads on first use). Its name is generateName-style: "<deployment>-<hash>-<5 chars>".
  boost::json::value pod(std::string_view ns);
  boost::json::value namespace_object(std::string_view name);
  boost::json::value config_map(std::string_view ns);
  boost::json::value deployment(std::string_view ns);
  // example.com/v1 Widget (namespaced) and ClusterWidget (cluster-scoped).
  boost::json::value widget(std::string_view ns);
  boost::json::value cluster_widget();

  // Changes for churn, applied to a copy of a stored object's JSON. Each always changes
  // something (the server drops no-op updates without an event) and adds what it needs when the
  // object lacks it.
  // Relabels the object (the "track" label flips between stable and canary): metadata only.
  void change_labels(boost::json::value& obj);
  // Moves a pod's status along (readiness flips, restart counts, probe times).
  void change_status(boost::json::value& pod);
  // Changes the spec (a container image tag, or a widget's size): the server bumps generation.
  void change_spec(boost::json::value& obj);

  // The namespace names bulk loads use: "default", "ns-1", "ns-2", ...
  static std::string namespace_name(std::size_t index);

private:
  struct workload;
  workload& pick_workload(std::string_view ns);
  workload make_workload(std::string_view ns);
  std::string timestamp(std::int64_t seconds_after_base) const;

  generator_options options_;
  random_source random_;
  std::map<std::string, std::vector<std::unique_ptr<workload>>, std::less<>> workloads_;
  std::uint64_t sequence_ = 0; // distinguishes objects and spreads their timestamps
};

// The managedFields "fieldsV1" set describing every field of `value`, as the API server's
// structured-merge-diff writes it: "f:<field>" for fields, "k:{...}" for list items keyed by
// name/type/containerPort/ip/mountPath, "." for a field owned as a whole. Fields nested deeper
// than `max_depth` levels (a keyed list item counts two) are recorded as owned whole.
boost::json::value fields_v1_of(const boost::json::value& value, int max_depth = 64);

// The resources the generator makes.
inline const group_version_resource pods_resource{"", "v1", "pods"};
inline const group_version_resource namespaces_resource{"", "v1", "namespaces"};
inline const group_version_resource config_maps_resource{"", "v1", "configmaps"};
inline const group_version_resource deployments_resource{"apps", "v1", "deployments"};
inline const group_version_resource widgets_resource{"example.com", "v1", "widgets"};
inline const group_version_resource cluster_widgets_resource{"example.com", "v1", "clusterwidgets"};

// The custom resources, as a CRD would register them: widgets.example.com (namespaced, kind
// Widget, short name "wd") and clusterwidgets.example.com (cluster-scoped, kind ClusterWidget,
// short name "cwd").
resource_info widget_resource_info();
resource_info cluster_widget_resource_info();
// Registers both with `store` (idempotent).
void register_example_resources(storage& store);

struct load_summary {
  std::size_t namespaces = 0; // Namespace objects created (existing ones are kept)
  std::size_t pods = 0;
};

// Bulk load: creates the Namespaces namespace_name(0 .. namespaces-1) and `pods` pods spread
// round-robin over them. Fails on the first write the storage refuses (other than a namespace
// that already exists), with the Status's description.
result<load_summary> load_pods(storage& store, object_generator& generator, std::size_t pods,
                               std::size_t namespaces);

} // namespace kinformer::sim
