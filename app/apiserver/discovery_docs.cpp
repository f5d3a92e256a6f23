#include "app/apiserver/discovery_docs.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

namespace json = boost::json;

namespace kinformer::apiserver {
namespace {

// A parsed "v<major>[alpha|beta<minor>]" version; `conventional` is false for other names.
struct kube_version {
  bool conventional = false;
  int stability = 0; // 2 GA, 1 beta, 0 alpha
  int major = 0;
  int minor = 0;
};

kube_version parse_version(std::string_view v) {
  kube_version out;
  if (v.size() < 2 || v[0] != 'v')
    return out;
  const char* p = v.data() + 1;
  const char* end = v.data() + v.size();
  auto [after_major, ec] = std::from_chars(p, end, out.major);
  if (ec != std::errc() || out.major <= 0)
    return out;
  std::string_view rest(after_major, static_cast<std::size_t>(end - after_major));
  if (rest.empty()) {
    out.stability = 2;
    out.conventional = true;
    return out;
  }
  for (auto [word, stability] :
       {std::pair{std::string_view("beta"), 1}, std::pair{std::string_view("alpha"), 0}}) {
    if (rest.substr(0, word.size()) != word)
      continue;
    auto digits = rest.substr(word.size());
    auto [last, ec2] = std::from_chars(digits.data(), digits.data() + digits.size(), out.minor);
    if (ec2 == std::errc() && last == digits.data() + digits.size() && out.minor > 0) {
      out.stability = stability;
      out.conventional = true;
    }
    return out;
  }
  return out;
}

json::object group_version_entry(std::string_view group, std::string_view version) {
  return {{"groupVersion", std::string(group) + "/" + std::string(version)}, {"version", version}};
}

// Every version served for each non-core group, highest priority first.
std::map<std::string, std::vector<std::string>>
versions_by_group(const std::vector<resource_info>& resources) {
  std::map<std::string, std::set<std::string>> found;
  for (const auto& r : resources)
    if (!r.gvr.group.empty())
      found[r.gvr.group].insert(r.gvr.version);
  std::map<std::string, std::vector<std::string>> out;
  for (auto& [group, versions] : found) {
    std::vector<std::string> sorted(versions.begin(), versions.end());
    std::sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) {
      return higher_version_priority(a, b);
    });
    out[group] = std::move(sorted);
  }
  return out;
}

json::object group_entry(std::string_view group, const std::vector<std::string>& versions) {
  json::array list;
  for (const auto& v : versions)
    list.push_back(group_version_entry(group, v));
  return {{"name", group},
          {"versions", std::move(list)},
          {"preferredVersion", group_version_entry(group, versions.front())}};
}

json::array string_array(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& s : items)
    out.emplace_back(s);
  return out;
}

} // namespace

bool higher_version_priority(std::string_view a, std::string_view b) {
  auto va = parse_version(a);
  auto vb = parse_version(b);
  if (va.conventional != vb.conventional)
    return va.conventional;
  if (!va.conventional)
    return a < b;
  // Higher stability, then higher major, then higher minor comes first.
  return std::tuple(va.stability, va.major, va.minor) >
         std::tuple(vb.stability, vb.major, vb.minor);
}

std::string version_document(std::string_view git_version) {
  auto parsed = parse_version(git_version.substr(0, git_version.find('.')));
  std::string major = parsed.conventional ? std::to_string(parsed.major) : "1";
  std::string minor = "0";
  if (auto dot = git_version.find('.'); dot != std::string_view::npos) {
    auto rest = git_version.substr(dot + 1);
    minor = std::string(rest.substr(0, rest.find('.')));
  }
  json::object doc{{"major", major},
                   {"minor", minor},
                   {"gitVersion", git_version},
                   {"gitCommit", "0000000000000000000000000000000000000000"},
                   {"gitTreeState", "clean"},
                   {"buildDate", "2024-01-01T00:00:00Z"},
                   {"goVersion", "go1.21.5"},
                   {"compiler", "gc"},
                   {"platform", "linux/amd64"}};
  return json::serialize(doc);
}

std::string core_versions_document(std::string_view server_address) {
  json::object doc{
      {"kind", "APIVersions"},
      {"versions", json::array{"v1"}},
      {"serverAddressByClientCIDRs",
       json::array{json::object{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
  return json::serialize(doc);
}

std::string group_list_document(const std::vector<resource_info>& resources) {
  json::array groups;
  for (const auto& [group, versions] : versions_by_group(resources))
    groups.push_back(group_entry(group, versions));
  json::object doc{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(groups)}};
  return json::serialize(doc);
}

std::optional<std::string> group_document(const std::vector<resource_info>& resources,
                                          std::string_view group) {
  auto all = versions_by_group(resources);
  auto it = all.find(std::string(group));
  if (it == all.end())
    return std::nullopt;
  json::object doc = group_entry(group, it->second);
  doc["kind"] = "APIGroup";
  doc["apiVersion"] = "v1";
  return json::serialize(doc);
}

std::optional<std::string> resource_list_document(const std::vector<resource_info>& resources,
                                                  std::string_view group,
                                                  std::string_view version) {
  json::array list;
  for (const auto& r : resources) {
    if (r.gvr.group != group || r.gvr.version != version)
      continue;
    json::object entry{{"name", r.gvr.resource},
                       {"singularName", r.singular},
                       {"namespaced", r.scope == resource_scope::namespaced},
                       {"kind", r.kind},
                       {"verbs", string_array(r.verbs)}};
    if (!r.short_names.empty())
      entry["shortNames"] = string_array(r.short_names);
    list.push_back(std::move(entry));
    if (r.status_subresource)
      list.push_back(json::object{{"name", r.gvr.resource + "/status"},
                                  {"singularName", ""},
                                  {"namespaced", r.scope == resource_scope::namespaced},
                                  {"kind", r.kind},
                                  {"verbs", string_array({"get", "patch", "update"})}});
  }
  if (list.empty())
    return std::nullopt;
  std::string group_version =
      group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
  json::object doc{{"kind", "APIResourceList"},
                   {"apiVersion", "v1"},
                   {"groupVersion", group_version},
                   {"resources", std::move(list)}};
  return json::serialize(doc);
}

} // namespace kinformer::apiserver
