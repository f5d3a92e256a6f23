#include "actors/controller/leader_election.hpp"

#include "protocol/micro_time.hpp"

#include <boost/json.hpp>

namespace json = boost::json;

namespace kinformer {
namespace {

std::string string_at(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_string())
    return std::string(v->as_string());
  return {};
}

std::int64_t number_at(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_int64())
    return v->as_int64();
  return 0;
}

std::int64_t whole_seconds(std::chrono::milliseconds d) {
  return std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

} // namespace

std::optional<observed_lease> parse_lease(std::string_view text) {
  std::error_code ec;
  auto value = json::parse(text, ec);
  if (ec || !value.is_object())
    return std::nullopt;
  const auto& o = value.as_object();
  if (string_at(o, "kind") != "Lease")
    return std::nullopt;
  observed_lease out;
  if (auto* meta = o.if_contains("metadata"); meta && meta->is_object())
    out.resource_version = string_at(meta->as_object(), "resourceVersion");
  if (auto* spec = o.if_contains("spec"); spec && spec->is_object()) {
    const auto& s = spec->as_object();
    out.spec.holder_identity = string_at(s, "holderIdentity");
    out.spec.lease_duration_seconds = number_at(s, "leaseDurationSeconds");
    out.spec.acquire_time = string_at(s, "acquireTime");
    out.spec.renew_time = string_at(s, "renewTime");
    out.spec.lease_transitions = number_at(s, "leaseTransitions");
  }
  return out;
}

std::string lease_write::body(const std::string& namespace_, const std::string& name) const {
  json::object metadata{{"name", name}, {"namespace", namespace_}};
  if (!create)
    metadata["resourceVersion"] = resource_version;
  json::object s{{"leaseDurationSeconds", spec.lease_duration_seconds},
                 {"leaseTransitions", spec.lease_transitions}};
  // An empty holder is written as none, as client-go's release does.
  if (!spec.holder_identity.empty())
    s["holderIdentity"] = spec.holder_identity;
  if (!spec.acquire_time.empty())
    s["acquireTime"] = spec.acquire_time;
  if (!spec.renew_time.empty())
    s["renewTime"] = spec.renew_time;
  return json::serialize(json::object{{"apiVersion", "coordination.k8s.io/v1"},
                                      {"kind", "Lease"},
                                      {"metadata", std::move(metadata)},
                                      {"spec", std::move(s)}});
}

leader_election::leader_election(std::string identity, leader_election_timings timings)
    : identity_(std::move(identity)), timings_(timings) {}

bool leader_election::lease_fresh(time_point now) const {
  auto duration = std::chrono::seconds(observed_.spec.lease_duration_seconds);
  return observed_time_ + duration > now;
}

std::optional<lease_write> leader_election::decide(const std::optional<observed_lease>& lease,
                                                   time_point now) {
  lease_write w;
  w.spec.holder_identity = identity_;
  w.spec.lease_duration_seconds = whole_seconds(timings_.lease_duration);
  w.spec.acquire_time = w.spec.renew_time = micro_time(now);
  if (!lease) {
    w.create = true;
    return w;
  }
  // The record's age is measured from when this candidate saw it change.
  if (!observed_any_ || lease->spec != observed_.spec) {
    observed_ = *lease;
    observed_any_ = true;
    observed_time_ = now;
  }
  observed_.resource_version = lease->resource_version;
  bool mine = lease->spec.holder_identity == identity_;
  if (!lease->spec.holder_identity.empty() && !mine && lease_fresh(now))
    return std::nullopt; // held by another, not yet expired
  w.resource_version = lease->resource_version;
  if (mine) {
    w.spec.acquire_time = lease->spec.acquire_time;
    w.spec.lease_transitions = lease->spec.lease_transitions;
  } else {
    w.spec.lease_transitions = lease->spec.lease_transitions + 1;
  }
  return w;
}

void leader_election::written(const lease_write& w, std::string resource_version, time_point now) {
  observed_.spec = w.spec;
  observed_.resource_version = std::move(resource_version);
  observed_any_ = true;
  observed_time_ = now;
  if (w.spec.holder_identity == identity_)
    last_renewal_ = now;
  else
    last_renewal_.reset();
}

bool leader_election::leading(time_point now) const {
  return observed_.spec.holder_identity == identity_ && last_renewal_ &&
         now - *last_renewal_ < timings_.renew_deadline;
}

std::optional<lease_write> leader_election::release(time_point now) const {
  if (!leading(now))
    return std::nullopt;
  lease_write w;
  w.resource_version = observed_.resource_version;
  w.spec.lease_duration_seconds = 1;
  w.spec.acquire_time = w.spec.renew_time = micro_time(now);
  w.spec.lease_transitions = observed_.spec.lease_transitions;
  return w;
}

} // namespace kinformer
