#include "app/kubesim/field_ownership.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <string_view>

namespace json = boost::json;

namespace kinformer::sim {
namespace {

bool server_owned_metadata(std::string_view key) {
  for (std::string_view k :
       {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
        "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"})
    if (key == k)
      return true;
  return false;
}

void collect_leaves(const json::object& o, field_path& at, field_set& out) {
  for (const auto& [key, value] : o) {
    if (at.empty() && (key == "apiVersion" || key == "kind" || key == "status"))
      continue;
    if (at.size() == 1 && at[0] == "metadata" && server_owned_metadata(key))
      continue;
    at.emplace_back(key);
    if (value.is_object() && !value.get_object().empty())
      collect_leaves(value.get_object(), at, out);
    else
      out.insert(at);
    at.pop_back();
  }
}

// One path is the other or lies inside it.
bool overlaps(const field_path& a, const field_path& b) {
  auto n = std::min(a.size(), b.size());
  return std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin());
}

bool owned_by(const field_set& fields, const field_path& p) {
  return std::any_of(fields.begin(), fields.end(),
                     [&](const field_path& q) { return overlaps(p, q); });
}

const json::value* value_at(const json::object& o, const field_path& path) {
  const json::object* at = &o;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto* v = at->if_contains(path[i]);
    if (!v)
      return nullptr;
    if (i + 1 == path.size())
      return v;
    if (!v->is_object())
      return nullptr;
    at = &v->get_object();
  }
  return nullptr;
}

void erase_at(json::object& o, const field_path& path) {
  json::object* at = &o;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    auto* v = at->if_contains(path[i]);
    if (!v || !v->is_object())
      return;
    at = &v->get_object();
  }
  at->erase(path.back());
}

bool same_value(const json::value* a, const json::value* b) {
  if (!a || !b)
    return a == b;
  return *a == *b;
}

// Maps merge key by key; everything else (scalars, lists) is replaced.
void merge_into(json::object& target, const json::object& config) {
  for (const auto& [key, value] : config) {
    auto* existing = target.if_contains(key);
    if (existing && existing->is_object() && value.is_object() && !value.get_object().empty())
      merge_into(existing->get_object(), value.get_object());
    else
      target[key] = value;
  }
}

managed_entry* find_entry(std::vector<managed_entry>& entries, const std::string& manager,
                          std::string_view operation) {
  for (auto& e : entries)
    if (e.manager == manager && e.operation == operation)
      return &e;
  return nullptr;
}

void take_from_others(std::vector<managed_entry>& entries, const field_set& taken,
                      const managed_entry* keep) {
  for (auto& e : entries) {
    if (&e == keep)
      continue;
    std::erase_if(e.fields, [&](const field_path& q) { return owned_by(taken, q); });
  }
}

void drop_empty(std::vector<managed_entry>& entries) {
  std::erase_if(entries, [](const managed_entry& e) { return e.fields.empty(); });
}

void decode_fields(const json::object& node, field_path& at, field_set& out) {
  for (const auto& [key, child] : node) {
    std::string_view k = key;
    if (k == ".") {
      if (!at.empty())
        out.insert(at);
    } else if (k.starts_with("f:")) {
      at.emplace_back(k.substr(2));
      if (child.is_object() && !child.get_object().empty())
        decode_fields(child.get_object(), at, out);
      else
        out.insert(at);
      at.pop_back();
    } else if (!at.empty()) {
      out.insert(at); // a list's elements ("k:", "v:", "i:"): the list is one field here
    }
  }
}

} // namespace

std::string dotted(const field_path& path) {
  std::string out;
  for (const auto& p : path)
    out += "." + p;
  return out;
}

field_set leaf_fields(const json::object& o) {
  field_set out;
  field_path at;
  collect_leaves(o, at, out);
  return out;
}

json::object to_fields_v1(const field_set& fields) {
  json::object root;
  for (const auto& path : fields) {
    json::object* at = &root;
    for (const auto& name : path) {
      auto& child = (*at)["f:" + name];
      if (!child.is_object())
        child = json::object();
      at = &child.get_object();
    }
  }
  return root;
}

field_set from_fields_v1(const json::object& fields_v1) {
  field_set out;
  field_path at;
  decode_fields(fields_v1, at, out);
  return out;
}

std::vector<managed_entry> read_managed_fields(const json::object& object) {
  std::vector<managed_entry> out;
  const auto* meta = object.if_contains("metadata");
  if (!meta || !meta->is_object())
    return out;
  const auto* list = meta->get_object().if_contains("managedFields");
  if (!list || !list->is_array())
    return out;
  auto text = [](const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  for (const auto& item : list->get_array()) {
    if (!item.is_object())
      continue;
    const auto& o = item.get_object();
    managed_entry e{
        text(o, "manager"), text(o, "operation"), text(o, "apiVersion"), text(o, "time"), {}};
    if (const auto* f = o.if_contains("fieldsV1"); f && f->is_object())
      e.fields = from_fields_v1(f->get_object());
    out.push_back(std::move(e));
  }
  return out;
}

void write_managed_fields(json::object& object, const std::vector<managed_entry>& entries) {
  auto& meta = object["metadata"];
  if (!meta.is_object())
    meta = json::object();
  if (entries.empty()) {
    meta.get_object().erase("managedFields");
    return;
  }
  json::array list;
  for (const auto& e : entries)
    list.push_back(json::object{{"manager", e.manager},
                                {"operation", e.operation},
                                {"apiVersion", e.api_version},
                                {"time", e.time},
                                {"fieldsType", "FieldsV1"},
                                {"fieldsV1", to_fields_v1(e.fields)}});
  meta.get_object()["managedFields"] = std::move(list);
}

apply_result server_side_apply(const json::object* live, const json::object& config,
                               const std::string& manager, bool force,
                               const std::string& api_version, const std::string& now) {
  apply_result out;
  auto entries = live ? read_managed_fields(*live) : std::vector<managed_entry>{};
  const field_set applied = leaf_fields(config);

  // Another manager's field that this apply sets to another value.
  field_set contested;
  for (const auto& e : entries) {
    if (e.manager == manager)
      continue;
    for (const auto& q : e.fields)
      for (const auto& p : applied)
        if (overlaps(p, q) &&
            !same_value(live ? value_at(*live, p) : nullptr, value_at(config, p))) {
          out.conflicts.push_back({e.manager, q});
          contested.insert(q);
          break;
        }
  }
  if (!out.conflicts.empty() && !force)
    return out;
  out.conflicts.clear();

  out.object = live ? *live : json::object();
  auto* mine = find_entry(entries, manager, "Apply");
  // What this manager applied before and applies no more goes, unless someone else owns it.
  if (mine)
    for (const auto& q : mine->fields) {
      if (owned_by(applied, q))
        continue;
      bool kept = std::any_of(entries.begin(), entries.end(), [&](const managed_entry& e) {
        return &e != mine && owned_by(e.fields, q);
      });
      if (!kept)
        erase_at(out.object, q);
    }
  json::object merged_config = config;
  if (auto* meta = merged_config.if_contains("metadata"); meta && meta->is_object())
    meta->get_object().erase("managedFields");
  merge_into(out.object, merged_config);

  // An apply that changes nothing writes nothing (not even the time): no new resourceVersion.
  if (mine && mine->fields == applied && contested.empty() && live) {
    json::object unchanged = out.object;
    write_managed_fields(unchanged, entries);
    if (unchanged == *live) {
      out.object = std::move(unchanged);
      return out;
    }
  }
  if (!mine) {
    entries.push_back({manager, "Apply", api_version, now, {}});
    mine = &entries.back();
  }
  mine->fields = applied;
  mine->api_version = api_version;
  mine->time = now;
  // Forced: the contested fields are this manager's alone now. Values that agree are shared.
  take_from_others(entries, contested, mine);
  drop_empty(entries);
  write_managed_fields(out.object, entries);
  return out;
}

void record_update(const json::object* before, json::object& after, const std::string& manager,
                   const std::string& api_version, const std::string& now) {
  auto entries = read_managed_fields(after);
  field_set changed;
  field_set removed;
  const field_set after_leaves = leaf_fields(after);
  for (const auto& p : after_leaves)
    if (!before || !same_value(value_at(*before, p), value_at(after, p)))
      changed.insert(p);
  if (before)
    for (const auto& p : leaf_fields(*before))
      if (!owned_by(after_leaves, p))
        removed.insert(p);
  if (changed.empty() && removed.empty())
    return;
  auto* mine = find_entry(entries, manager, "Update");
  take_from_others(entries, changed, mine);
  for (auto& e : entries)
    std::erase_if(e.fields, [&](const field_path& q) { return removed.count(q) > 0; });
  if (!changed.empty()) {
    if (!mine) {
      entries.push_back({manager, "Update", api_version, now, {}});
      mine = &entries.back();
    }
    mine->fields.insert(changed.begin(), changed.end());
    mine->api_version = api_version;
    mine->time = now;
  }
  drop_empty(entries);
  write_managed_fields(after, entries);
}

} // namespace kinformer::sim
