#pragma once
// Small Pod-shaped objects for the store, indexer and queue tests.

#include "protocol/object.hpp"

#include <boost/json.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kinformer::testing {

struct pod_spec {
  std::string ns = "default"; // "" makes a cluster-scoped object
  std::string name;
  std::string resource_version = "1";
  std::vector<std::pair<std::string, std::string>> labels = {};
  std::string node_name = ""; // spec.nodeName; omitted when empty
  std::string phase = "";     // status.phase; omitted when empty
};

inline object_ptr make_pod(const pod_spec& spec) {
  boost::json::object meta{{"name", spec.name}, {"resourceVersion", spec.resource_version}};
  if (!spec.ns.empty())
    meta["namespace"] = spec.ns;
  boost::json::object labels;
  for (const auto& [k, v] : spec.labels)
    labels[k] = v;
  meta["labels"] = std::move(labels);
  boost::json::object pod{{"kind", "Pod"}, {"apiVersion", "v1"}, {"metadata", std::move(meta)}};
  if (!spec.node_name.empty())
    pod["spec"] = boost::json::object{{"nodeName", spec.node_name}};
  if (!spec.phase.empty())
    pod["status"] = boost::json::object{{"phase", spec.phase}};
  auto obj = object::from_json(boost::json::value(std::move(pod)));
  if (!obj)
    throw std::runtime_error(obj.err().describe());
  return std::move(obj).value();
}

inline object_ptr make_pod(std::string ns, std::string name, std::string resource_version = "1") {
  return make_pod(pod_spec{std::move(ns), std::move(name), std::move(resource_version)});
}

} // namespace kinformer::testing
