#include "protocol/rest_mapper.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

namespace kinformer {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string discovery_path(const group_version& gv) {
  return gv.group.empty() ? "/api/" + gv.version : "/apis/" + gv.group + "/" + gv.version;
}

// kubectl's schema.ParseResourceArg: "a.b.c" may be resource.version.group; any "a.b..." may
// be resource.group.
struct resource_argument {
  std::string resource;
  std::optional<group_version> fully_specified; // from "resource.version.group"
  std::optional<std::string> group;             // from "resource.group"
};

resource_argument parse_resource_argument(std::string_view argument) {
  resource_argument parsed;
  std::string text = lower(argument);
  auto first_dot = text.find('.');
  parsed.resource = text.substr(0, first_dot);
  if (first_dot == std::string::npos)
    return parsed;
  std::string rest = text.substr(first_dot + 1);
  parsed.group = rest;
  auto second_dot = rest.find('.');
  if (second_dot != std::string::npos)
    parsed.fully_specified = group_version{rest.substr(second_dot + 1), rest.substr(0, second_dot)};
  return parsed;
}

bool names_resource(const std::string& name, const rest_mapping& m, const std::string& singular,
                    const std::vector<std::string>& short_names) {
  return name == m.resource.resource || name == singular ||
         std::find(short_names.begin(), short_names.end(), name) != short_names.end();
}

} // namespace

rest_mapper::rest_mapper(discovery_fetch fetch) : fetch_(std::move(fetch)) {}

status_result rest_mapper::read_group_version(const group_version& gv, bool preferred) {
  auto path = discovery_path(gv);
  auto body = fetch_(path);
  if (!body)
    return make_error(body.err().code, path + ": " + body.err().message);
  auto list = decode_api_resource_list(*body);
  if (!list)
    return make_error(list.err().code, path + ": " + list.err().message);
  if (list->group_version != gv.api_version())
    return make_error(errc::invalid_object, path + ": groupVersion is \"" + list->group_version +
                                                "\", expected \"" + gv.api_version() + "\"");
  for (auto& r : list->resources) {
    entry e;
    e.mapping.resource = {gv.group, gv.version, r.name};
    e.mapping.kind = {gv.group, gv.version, r.kind};
    e.mapping.scope = r.namespaced ? resource_scope::namespaced : resource_scope::cluster;
    e.mapping.verbs = std::move(r.verbs);
    // Older servers omit singularName; kubectl falls back to the lower-case kind.
    e.singular_name = r.singular_name.empty() ? lower(r.kind) : lower(r.singular_name);
    for (auto& s : r.short_names)
      e.short_names.push_back(lower(s));
    e.preferred = preferred;
    entries_.push_back(std::move(e));
  }
  return ok_v;
}

status_result rest_mapper::refresh() {
  ++refreshes_;
  entries_.clear();
  failures_.clear();
  loaded_ = false;

  auto note = [this](status_result read) {
    if (!read)
      failures_.push_back(std::move(read).err());
  };

  auto core = fetch_("/api");
  if (!core)
    return make_error(core.err().code, "/api: " + core.err().message);
  auto core_versions = decode_api_versions(*core);
  if (!core_versions)
    return make_error(core_versions.err().code, "/api: " + core_versions.err().message);

  auto groups_body = fetch_("/apis");
  if (!groups_body)
    return make_error(groups_body.err().code, "/apis: " + groups_body.err().message);
  auto groups = decode_api_group_list(*groups_body);
  if (!groups)
    return make_error(groups.err().code, "/apis: " + groups.err().message);

  // The core group has one version in practice; the first listed is preferred.
  for (std::size_t i = 0; i < core_versions->size(); ++i)
    note(read_group_version({"", (*core_versions)[i]}, i == 0));
  for (const auto& group : *groups) {
    note(read_group_version({group.name, group.preferred_version}, true));
    for (const auto& version : group.versions)
      if (version != group.preferred_version)
        note(read_group_version({group.name, version}, false));
  }
  loaded_ = true;
  return ok_v;
}

std::string rest_mapper::failure_note() const {
  if (failures_.empty())
    return "";
  std::string note = " (discovery failed for";
  for (const auto& f : failures_)
    note += " [" + f.message + "]";
  return note + ")";
}

template <class Match>
result<rest_mapping> rest_mapper::lookup(Match match, const std::string& what) {
  // Read discovery on first use; on a miss, read it again once (a CRD may be new).
  bool fresh = false;
  if (!loaded_) {
    if (auto read = refresh(); !read)
      return std::move(read).err();
    fresh = true;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (auto found = match(); found)
      return *found;
    if (fresh)
      break;
    if (auto read = refresh(); !read)
      return std::move(read).err();
    fresh = true;
  }
  return make_error(errc::no_match, "no matches for " + what + failure_note());
}

result<rest_mapping> rest_mapper::mapping_for(const group_version_kind& kind) {
  auto match = [&]() -> std::optional<rest_mapping> {
    for (const auto& e : entries_) {
      const auto& k = e.mapping.kind;
      if (k.group != kind.group || k.kind != kind.kind)
        continue;
      if (kind.version.empty() ? e.preferred : k.version == kind.version)
        return e.mapping;
    }
    // No version given and the kind is absent from the preferred version: take any.
    if (kind.version.empty())
      for (const auto& e : entries_)
        if (e.mapping.kind.group == kind.group && e.mapping.kind.kind == kind.kind)
          return e.mapping;
    return std::nullopt;
  };
  std::string what = "kind \"" + kind.kind + "\" in group \"" + kind.group + "\"" +
                     (kind.version.empty() ? "" : " version \"" + kind.version + "\"");
  return lookup(match, what);
}

result<rest_mapping> rest_mapper::resource_for(std::string_view argument) {
  if (argument.empty() || argument.front() == '.' || argument.back() == '.')
    return make_error(errc::invalid_argument,
                      "invalid resource name \"" + std::string(argument) + "\"");
  auto parsed = parse_resource_argument(argument);

  auto match = [&]() -> std::optional<rest_mapping> {
    auto first = [&](auto&& accept) -> std::optional<rest_mapping> {
      // Preferred versions win over others, in group order.
      for (bool preferred_only : {true, false})
        for (const auto& e : entries_)
          if ((!preferred_only || e.preferred) &&
              names_resource(parsed.resource, e.mapping, e.singular_name, e.short_names) &&
              accept(e.mapping.resource))
            return e.mapping;
      return std::nullopt;
    };
    if (parsed.fully_specified)
      if (auto m = first([&](const group_version_resource& r) {
            return r.group == parsed.fully_specified->group &&
                   r.version == parsed.fully_specified->version;
          }))
        return m;
    if (parsed.group)
      return first([&](const group_version_resource& r) { return r.group == *parsed.group; });
    return first([](const group_version_resource&) { return true; });
  };
  return lookup(match, "resource \"" + std::string(argument) + "\"");
}

} // namespace kinformer
