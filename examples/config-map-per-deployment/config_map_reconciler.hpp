#pragma once
// The example controller's reconciler: for each Deployment, a ConfigMap "<deployment>-info" that
// holds its replicas and first image, owned by it (so the garbage collector removes it with the
// Deployment). It reads through the cache and writes through resource_writer; it deletes a
// ConfigMap whose Deployment is gone itself, for API servers without a garbage collector (the
// simulator). Each change it makes is recorded as an Event on the Deployment.

#include "actors/cache_client.hpp"
#include "actors/controller/controller.hpp"
#include "actors/controller/event_recorder.hpp"
#include "protocol/resource_writer.hpp"

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace example {

kinformer::kind_request deployments();
kinformer::kind_request config_maps();

// The ConfigMap's name for a Deployment.
std::string info_name(std::string_view deployment_name);
// What the ConfigMap of `deployment` holds: {"replicas": "3", "image": "nginx:1"}.
boost::json::object desired_data(const kinformer::object& deployment);
// A ConfigMap's data, when it has some.
std::optional<boost::json::object> data_of(const kinformer::object& config_map);

struct config_map_reconciler {
  kinformer::cache_client& reader;
  const kinformer::resource_writer& writer;
  const kinformer::event_recorder* events = nullptr; // optional

  kinformer::result<kinformer::reconcile_result>
  operator()(const kinformer::reconcile_request& req) const;
};

// The controller: for Deployments, owning ConfigMaps, with `reconcile` as its reconciler.
kinformer::controller_spec config_map_controller(kinformer::reconciler reconcile,
                                                 std::size_t workers = 2);

} // namespace example
