#include "config_map_reconciler.hpp"

#include <boost/json.hpp>

namespace json = boost::json;
using namespace kinformer;

namespace example {
namespace {

const group_version_resource configmaps_resource{"", "v1", "configmaps"};

json::object owned_config_map(const reconcile_request& req, const object& deployment) {
  json::object owner{{"apiVersion", "apps/v1"}, {"kind", "Deployment"},
                     {"name", req.name},        {"uid", deployment.meta().uid},
                     {"controller", true},      {"blockOwnerDeletion", true}};
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", info_name(req.name)},
                        {"namespace", req.namespace_},
                        {"ownerReferences", json::array{owner}}}},
                      {"data", desired_data(deployment)}};
}

} // namespace

kind_request deployments() {
  kind_request k;
  k.kind = {"apps", "v1", "Deployment"};
  return k;
}

kind_request config_maps() {
  kind_request k;
  k.kind = {"", "v1", "ConfigMap"};
  return k;
}

std::string info_name(std::string_view deployment_name) {
  return std::string(deployment_name) + "-info";
}

json::object desired_data(const object& deployment) {
  auto tree = deployment.tree();
  json::object out;
  const auto* spec = tree.as_object().if_contains("spec");
  if (!spec || !spec->is_object())
    return out;
  const auto* replicas = spec->as_object().if_contains("replicas");
  out["replicas"] = replicas && replicas->is_int64() ? std::to_string(replicas->as_int64()) : "1";
  std::error_code ec;
  const auto* first = tree.find_pointer("/spec/template/spec/containers/0", ec);
  if (first && first->is_object())
    if (const auto* image = first->as_object().if_contains("image"); image && image->is_string())
      out["image"] = image->as_string();
  return out;
}

std::optional<json::object> data_of(const object& config_map) {
  auto tree = config_map.tree();
  if (auto* data = tree.as_object().if_contains("data"); data && data->is_object())
    return data->as_object();
  return std::nullopt;
}

result<reconcile_result> config_map_reconciler::operator()(const reconcile_request& req) const {
  resource_location where{configmaps_resource, req.namespace_};
  auto deployment = reader.get(deployments(), req.namespace_, req.name);
  auto existing = reader.get(config_maps(), req.namespace_, info_name(req.name));
  if (!deployment) {
    if (deployment.err().code != errc::not_found)
      return deployment.err();
    if (!existing)
      return reconcile_result{};
    delete_options options;
    options.uid = std::string((*existing)->meta().uid); // only the one we saw
    auto removed = writer.remove(where, info_name(req.name), options);
    if (!removed && removed.err().code != errc::not_found)
      return removed.err();
    return reconcile_result{};
  }
  auto wanted = owned_config_map(req, **deployment);
  if (!existing) {
    if (existing.err().code != errc::not_found)
      return existing.err();
    auto created = writer.create(where, json::serialize(wanted));
    if (!created && created.err().code == errc::already_exists)
      return reconcile_result{true, {}}; // the cache has not seen it yet: look again
    if (!created)
      return created.err();
    if (events)
      events->normal(**deployment, "ConfigMapCreated", "Create",
                     "created ConfigMap " + info_name(req.name));
    return reconcile_result{};
  }
  if (data_of(**existing) == wanted.at("data").as_object())
    return reconcile_result{};
  // Conditional on the version read: a conflict retries with backoff, as controller-runtime's.
  wanted["metadata"].as_object()["resourceVersion"] = (*existing)->meta().resource_version;
  auto updated = writer.update(where, info_name(req.name), json::serialize(wanted));
  if (!updated)
    return updated.err();
  if (events)
    events->normal(**deployment, "ConfigMapUpdated", "Update",
                   "updated ConfigMap " + info_name(req.name));
  return reconcile_result{};
}

controller_spec config_map_controller(reconciler reconcile, std::size_t workers) {
  controller_spec spec;
  spec.options.name = "config-map-per-deployment";
  spec.options.workers = workers;
  spec.sources = {for_kind(deployments()), owns(config_maps(), "apps", "Deployment")};
  spec.reconcile = std::move(reconcile);
  return spec;
}

} // namespace example
