#include "app/kubesim/control_routes.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/discovery_docs.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <mutex>
#include <optional>

namespace kinformer::sim {
namespace {

namespace json = boost::json;

std::string query_or(const control_request& req, const std::string& name, std::string fallback) {
  auto it = req.query.find(name);
  return it == req.query.end() ? fallback : it->second;
}

// A non-negative integer query parameter, or nullopt when it is present but malformed.
std::optional<std::int64_t> query_number(const control_request& req, const std::string& name,
                                         std::int64_t fallback) {
  auto text = query_or(req, name, "");
  if (text.empty())
    return fallback;
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0)
    return std::nullopt;
  return n;
}

control_response control_error(const status& s) {
  return control_response{s.code, "application/json", apiserver::status_json(s)};
}

control_response control_ok() {
  return control_response{200, "application/json", "{}"};
}

// A CustomResourceDefinition (apiextensions.k8s.io/v1), or the short form
// {group, version, resource, kind, singular?, scope?, shortNames?}, as resources to register.
api_result<std::vector<resource_info>> parse_custom_resources(const std::string& body) {
  boost::system::error_code ec;
  auto value = json::parse(body, ec);
  if (ec || !value.is_object())
    return apiserver::bad_request("custom resource definition is not a JSON object");
  const auto& root = value.get_object();
  auto text = [](const json::object& o, std::string_view key) -> std::string {
    auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  auto strings = [](const json::object& o, std::string_view key) {
    std::vector<std::string> out;
    if (auto* v = o.if_contains(key); v && v->is_array())
      for (const auto& e : v->get_array())
        if (e.is_string())
          out.emplace_back(e.get_string());
    return out;
  };
  std::vector<std::string> all_verbs{"create", "delete", "deletecollection", "get",
                                     "list",   "patch",  "update",           "watch"};
  std::vector<resource_info> out;
  resource_info info;
  info.verbs = all_verbs;
  if (text(root, "kind") == "CustomResourceDefinition") {
    auto* spec = root.if_contains("spec");
    if (!spec || !spec->is_object())
      return apiserver::bad_request("CustomResourceDefinition has no spec");
    const auto& s = spec->get_object();
    auto* names = s.if_contains("names");
    if (!names || !names->is_object())
      return apiserver::bad_request("CustomResourceDefinition has no spec.names");
    info.gvr.group = text(s, "group");
    info.gvr.resource = text(names->get_object(), "plural");
    info.kind = text(names->get_object(), "kind");
    info.singular = text(names->get_object(), "singular");
    info.short_names = strings(names->get_object(), "shortNames");
    info.scope =
        text(s, "scope") == "Cluster" ? resource_scope::cluster : resource_scope::namespaced;
    if (auto* versions = s.if_contains("versions"); versions && versions->is_array()) {
      for (const auto& v : versions->get_array()) {
        if (!v.is_object())
          continue;
        auto* served = v.get_object().if_contains("served");
        if (served && served->is_bool() && !served->get_bool())
          continue;
        info.gvr.version = text(v.get_object(), "name");
        out.push_back(info);
      }
    }
  } else {
    info.gvr = {text(root, "group"), text(root, "version"), text(root, "resource")};
    info.kind = text(root, "kind");
    info.singular = text(root, "singular");
    info.short_names = strings(root, "shortNames");
    info.scope =
        text(root, "scope") == "Cluster" ? resource_scope::cluster : resource_scope::namespaced;
    out.push_back(info);
  }
  if (out.empty())
    return apiserver::bad_request("custom resource definition serves no version");
  for (auto& r : out) {
    if (r.gvr.group.empty() || r.gvr.version.empty() || r.gvr.resource.empty() || r.kind.empty())
      return apiserver::bad_request(
          "custom resource needs group, version, resource (plural) and kind");
    if (r.singular.empty()) {
      r.singular = r.kind;
      std::transform(r.singular.begin(), r.singular.end(), r.singular.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
  }
  return out;
}

} // namespace

void add_builtin_control_routes(simulator& sim) {
  auto post_only = [](auto action) {
    return [action](const control_request& req) {
      if (req.method != "POST")
        return control_error(apiserver::method_not_allowed());
      return action(req);
    };
  };
  // ?count=N&code=C[&retryAfter=S] (a 429 without retryAfter carries Retry-After: 1), then
  // `arm(count, code, retry_after)`.
  auto arm_failures = [&post_only](auto arm) {
    return post_only([arm](const control_request& req) {
      auto count = query_number(req, "count", 1);
      auto code = query_number(req, "code", 500);
      auto retry = query_number(req, "retryAfter", -1);
      if (!count || !code || !retry || *code < 400 || *code > 599)
        return control_error(apiserver::bad_request(
            "count and retryAfter must be non-negative integers, code 400-599"));
      std::optional<int> retry_after;
      if (*retry >= 0)
        retry_after = static_cast<int>(*retry);
      else if (*code == 429)
        retry_after = 1;
      arm(static_cast<std::size_t>(*count), static_cast<int>(*code), retry_after);
      return control_ok();
    });
  };
  sim.add_control_route("/sim/faults/drop-watches", post_only([&sim](const control_request&) {
                          sim.drop_watches();
                          return control_ok();
                        }));
  sim.add_control_route("/sim/faults/stall-watches", post_only([&sim](const control_request&) {
                          sim.stall_watches();
                          return control_ok();
                        }));
  sim.add_control_route("/sim/faults/resume-watches", post_only([&sim](const control_request&) {
                          sim.resume_watches();
                          return control_ok();
                        }));
  // 410 Expired by default; code=429&retryAfter=N answers as an overloaded server.
  sim.add_control_route(
      "/sim/faults/fail-watches", post_only([&sim](const control_request& req) {
        auto count = query_number(req, "count", 1);
        auto code = query_number(req, "code", 410);
        auto retry = query_number(req, "retryAfter", -1);
        if (!count || !code || !retry || *code < 400 || *code > 599)
          return control_error(apiserver::bad_request(
              "count and retryAfter must be non-negative integers, code 400-599"));
        if (*code == 410) {
          sim.store().fail_next_watches(static_cast<std::size_t>(*count));
          return control_ok();
        }
        std::optional<int> retry_after;
        if (*retry >= 0)
          retry_after = static_cast<int>(*retry);
        else if (*code == 429)
          retry_after = 1;
        sim.store().fail_next_watches(static_cast<std::size_t>(*count), static_cast<int>(*code),
                                      retry_after);
        return control_ok();
      }));
  sim.add_control_route(
      "/sim/faults/expire-continues", post_only([&sim](const control_request& req) {
        auto count = query_number(req, "count", 1);
        if (!count)
          return control_error(apiserver::bad_request("count must be a non-negative integer"));
        sim.store().expire_next_continues(static_cast<std::size_t>(*count));
        return control_ok();
      }));
  // refuse=true (the default) or refuse=false.
  sim.add_control_route(
      "/sim/faults/refuse-streaming-lists", post_only([&sim](const control_request& req) {
        auto refuse = query_or(req, "refuse", "true");
        if (refuse != "true" && refuse != "false")
          return control_error(apiserver::bad_request("refuse must be true or false"));
        sim.store().refuse_streaming_lists(refuse == "true");
        return control_ok();
      }));
  sim.add_control_route("/sim/faults/fail-lists",
                        arm_failures([&sim](std::size_t count, int code, std::optional<int> retry) {
                          sim.store().fail_next_lists(count, code, retry);
                        }));
  sim.add_control_route("/sim/faults/fail-writes",
                        arm_failures([&sim](std::size_t count, int code, std::optional<int> retry) {
                          sim.store().fail_next_writes(count, code, retry);
                        }));
  sim.add_control_route("/sim/faults/compact", post_only([&sim](const control_request&) {
                          sim.store().compact();
                          return control_ok();
                        }));
  // The backup /sim/faults/restore?to=backup goes back to (one at a time; a new one replaces
  // it). Shared by the two routes, which run on any I/O thread.
  struct saved_backup {
    std::mutex mutex;
    std::optional<storage_backup> backup;
  };
  auto saved = std::make_shared<saved_backup>();
  sim.add_control_route("/sim/faults/backup", post_only([&sim, saved](const control_request&) {
                          auto backup = sim.store().backup();
                          json::object out{{"resourceVersion", backup.resource_version()},
                                           {"objects", backup.size()}};
                          std::lock_guard lock(saved->mutex);
                          saved->backup = std::move(backup);
                          return control_response{200, "application/json", json::serialize(out)};
                        }));
  // An API server restarts after an etcd restore: every open watch ends with it.
  sim.add_control_route(
      "/sim/faults/restore", post_only([&sim, saved](const control_request& req) {
        auto to = query_or(req, "to", "now");
        if (to != "now" && to != "backup")
          return control_error(apiserver::bad_request("to must be now or backup"));
        if (to == "backup") {
          std::lock_guard lock(saved->mutex);
          if (!saved->backup)
            return control_error(
                apiserver::bad_request("no backup taken: POST /sim/faults/backup first"));
          sim.store().restore(*saved->backup);
        } else {
          sim.store().restore();
        }
        sim.drop_watches();
        return control_ok();
      }));
  sim.add_control_route("/sim/faults/skip-revisions", post_only([&sim](const control_request& req) {
                          auto count = query_number(req, "count", 1000);
                          if (!count)
                            return control_error(
                                apiserver::bad_request("count must be a non-negative integer"));
                          sim.store().skip_revisions(static_cast<std::uint64_t>(*count));
                          return control_ok();
                        }));
  // Every fault lifted at once: armed failures disarmed, streaming lists accepted, stalled
  // watches resumed, latency off.
  sim.add_control_route("/sim/faults/reset", post_only([&sim](const control_request&) {
                          sim.store().clear_faults();
                          sim.resume_watches();
                          sim.set_latency(std::chrono::milliseconds(0));
                          return control_ok();
                        }));
  sim.add_control_route("/sim/faults/latency", post_only([&sim](const control_request& req) {
                          auto ms = query_number(req, "ms", 0);
                          if (!ms)
                            return control_error(
                                apiserver::bad_request("ms must be a non-negative integer"));
                          sim.set_latency(std::chrono::milliseconds(*ms));
                          return control_ok();
                        }));
  // How many watches are open now (set up and not yet ended).
  sim.add_control_route("/sim/watches", [&sim](const control_request& req) {
    if (req.method != "GET")
      return control_error(apiserver::method_not_allowed());
    json::object out{{"open", sim.open_watches()}};
    return control_response{200, "application/json", json::serialize(out)};
  });
  sim.add_control_route("/sim/truth", [&sim](const control_request& req) {
    if (req.method != "GET")
      return control_error(apiserver::method_not_allowed());
    auto resource = query_or(req, "resource", "");
    auto group = req.query.find("group");
    std::optional<resource_info> found;
    for (auto& r : sim.store().resources())
      if (r.gvr.resource == resource && (group == req.query.end() || group->second == r.gvr.group))
        if (!found || apiserver::higher_version_priority(r.gvr.version, found->gvr.version))
          found = r;
    if (!found)
      return control_error(apiserver::resource_not_found());
    auto labels = label_selector::parse(query_or(req, "labelSelector", ""));
    if (!labels)
      return control_error(apiserver::bad_request("labelSelector: " + labels.err().message));
    json::array out;
    for (const auto& entry : sim.store().truth(found->gvr, labels.value()))
      out.push_back(json::object{{"key", entry.key},
                                 {"resourceVersion", std::to_string(entry.resource_version)}});
    return control_response{200, "application/json", json::serialize(out)};
  });
  sim.add_control_route(
      "/sim/crds", post_only([&sim](const control_request& req) {
        auto parsed = parse_custom_resources(req.body);
        if (!parsed)
          return control_error(parsed.failure());
        json::array registered;
        for (auto& info : parsed.value()) {
          registered.emplace_back(info.gvr.to_string());
          sim.store().register_resource(std::move(info));
        }
        return control_response{201, "application/json", json::serialize(registered)};
      }));
}

} // namespace kinformer::sim
