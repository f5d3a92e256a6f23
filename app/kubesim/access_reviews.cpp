#include "app/kubesim/access_reviews.hpp"

#include "app/apiserver/api_status.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace kinformer::sim {

namespace json = boost::json;

namespace {

std::string text_at(const json::object& obj, std::string_view key) {
  const auto* v = obj.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

api_result<json::object> spec_of(std::string_view body) {
  boost::system::error_code ec;
  auto value = json::parse(body, ec);
  if (ec || !value.is_object())
    return apiserver::bad_request("the review is not a JSON object");
  const auto* spec = value.get_object().if_contains("spec");
  if (!spec || !spec->is_object())
    return apiserver::bad_request("the review has no spec");
  return spec->get_object();
}

bool covers(const std::vector<std::string>& allowed, const std::string& wanted) {
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const std::string& a) { return a == "*" || a == wanted; });
}

} // namespace

api_result<std::string> token_review(std::string_view body, const std::vector<review_user>& users) {
  auto spec = spec_of(body);
  if (!spec)
    return spec.failure();
  const std::string token = text_at(*spec, "token");
  json::object status{{"authenticated", false}};
  for (const auto& user : users)
    if (!token.empty() && user.token == token) {
      json::array groups;
      for (const auto& g : user.groups)
        groups.emplace_back(g);
      status = {{"authenticated", true},
                {"user", {{"username", user.name}, {"uid", user.uid}, {"groups", groups}}}};
      break;
    }
  if (!status.at("authenticated").as_bool())
    status["error"] = "invalid bearer token";
  return json::serialize(json::object{{"apiVersion", "authentication.k8s.io/v1"},
                                      {"kind", "TokenReview"},
                                      {"spec", *spec},
                                      {"status", status}});
}

api_result<std::string> subject_access_review(std::string_view body,
                                              const std::vector<review_grant>& grants) {
  auto spec = spec_of(body);
  if (!spec)
    return spec.failure();
  const std::string user = text_at(*spec, "user");
  std::vector<std::string> subjects{user};
  if (const auto* groups = spec->if_contains("groups"); groups && groups->is_array())
    for (const auto& g : groups->get_array())
      if (g.is_string())
        subjects.push_back("group:" + std::string(g.get_string()));
  json::object attributes;
  if (const auto* a = spec->if_contains("resourceAttributes"); a && a->is_object())
    attributes = a->get_object();
  const std::string verb = text_at(attributes, "verb");
  const std::string resource = text_at(attributes, "resource");
  const std::string ns = text_at(attributes, "namespace");
  const bool allowed = std::any_of(grants.begin(), grants.end(), [&](const review_grant& g) {
    return std::find(subjects.begin(), subjects.end(), g.subject) != subjects.end() &&
           covers(g.verbs, verb) && covers(g.resources, resource) &&
           (g.namespace_.empty() || g.namespace_ == ns);
  });
  json::object status{{"allowed", allowed}};
  if (!allowed)
    status["reason"] = "no grant for " + user;
  return json::serialize(json::object{{"apiVersion", "authorization.k8s.io/v1"},
                                      {"kind", "SubjectAccessReview"},
                                      {"spec", *spec},
                                      {"status", status}});
}

} // namespace kinformer::sim
