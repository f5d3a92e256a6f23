#include "actors/cache_plan.hpp"

#include <algorithm>
#include <iterator>

namespace kinformer {

namespace {

bool has_verb(const rest_mapping& mapping, std::string_view verb) {
  return std::find(mapping.verbs.begin(), mapping.verbs.end(), verb) != mapping.verbs.end();
}

// `metadata.namespace!=a,metadata.namespace!=b`: what keeps the all-namespaces informer away
// from the namespaces that have their own.
field_selector exclude_namespaces(const std::vector<std::string>& namespaces) {
  field_selector out;
  for (const auto& ns : namespaces) {
    if (ns.empty())
      continue;
    auto term = field_selector::parse("metadata.namespace!=" + ns);
    // Namespace names are DNS labels; a name the grammar refuses cannot match any object.
    if (term)
      out = out & *term;
  }
  return out;
}

// The namespaces to run informers in: sorted, unique, the all-namespaces entry "" last.
std::vector<std::string> namespaces_for(const cache_options& options,
                                        const by_object_options* by_object) {
  std::vector<std::string> namespaces =
      by_object && by_object->namespaces ? *by_object->namespaces : options.default_namespaces;
  if (namespaces.empty())
    return {""};
  std::sort(namespaces.begin(), namespaces.end());
  namespaces.erase(std::unique(namespaces.begin(), namespaces.end()), namespaces.end());
  if (namespaces.front().empty())
    std::rotate(namespaces.begin(), namespaces.begin() + 1, namespaces.end());
  return namespaces;
}

error uncovered(const kind_plan& plan, std::string_view ns) {
  std::string covered;
  for (const auto& informer : plan.informers)
    covered += (covered.empty() ? "" : ", ") + informer.namespace_;
  return make_error(errc::namespace_not_covered,
                    "namespace \"" + std::string(ns) + "\" is not covered by the cache for " +
                        plan.describe() + " (covered: " + covered + ")");
}

} // namespace

std::string kind_plan::describe() const {
  return kind_request{mapping.kind, {}, metadata_only}.describe();
}

result<rest_mapping> resolve_kind(rest_mapper& mapper, const kind_request& request) {
  auto mapping = [&]() -> result<rest_mapping> {
    if (!request.kind.kind.empty())
      return mapper.mapping_for(request.kind);
    if (!request.resource.empty())
      return mapper.resource_for(request.resource);
    return make_error(errc::invalid_argument, "a kind request names neither a kind nor a resource");
  }();
  if (!mapping)
    return mapping;
  if (!has_verb(*mapping, "list") || !has_verb(*mapping, "watch"))
    return make_error(errc::invalid_argument, mapping->resource.to_string() +
                                                  " cannot be cached: it does not support list "
                                                  "and watch");
  return mapping;
}

std::optional<std::size_t>
find_by_object(const std::vector<by_object_options>& by_object,
               const std::vector<std::optional<rest_mapping>>& by_object_mappings,
               const rest_mapping& mapping, bool metadata_only) {
  std::optional<std::size_t> same_resource;
  for (std::size_t i = 0; i < by_object.size() && i < by_object_mappings.size(); ++i) {
    const auto& candidate = by_object_mappings[i];
    if (!candidate || candidate->resource != mapping.resource)
      continue;
    if (by_object[i].kind.metadata_only == metadata_only)
      return i;
    if (!same_resource)
      same_resource = i;
  }
  return same_resource;
}

kind_plan plan_kind(const cache_options& options, const rest_mapping& mapping, bool metadata_only,
                    const by_object_options* by_object) {
  kind_plan plan;
  plan.mapping = mapping;
  plan.metadata_only = metadata_only;
  plan.sync_period =
      by_object && by_object->sync_period ? *by_object->sync_period : options.sync_period;

  informer_config base;
  base.resource = mapping.resource;
  base.kind = mapping.kind.kind;
  base.scope = mapping.scope;
  base.labels =
      by_object && by_object->labels ? *by_object->labels : options.default_label_selector;
  base.fields =
      by_object && by_object->fields ? *by_object->fields : options.default_field_selector;
  base.metadata_only = metadata_only;
  base.transform =
      by_object && by_object->transform ? by_object->transform : options.default_transform;
  base.compress_objects = by_object && by_object->compress_objects ? by_object->compress_objects
                                                                   : options.compress_objects;
  base.packing = options.packing;
  base.watch = options.watch;
  base.retry = options.retry;
  base.store = options.store;
  base.change_window = options.change_window;
  base.observer = options.observer;

  if (plan.cluster_scoped()) {
    plan.informers.push_back({"", base});
    return plan;
  }
  auto namespaces = namespaces_for(options, by_object);
  for (const auto& ns : namespaces) {
    planned_informer informer{ns, base};
    informer.config.namespace_ = ns;
    if (ns.empty() && namespaces.size() > 1)
      informer.config.fields = informer.config.fields & exclude_namespaces(namespaces);
    plan.informers.push_back(std::move(informer));
  }
  return plan;
}

result<std::size_t> route_get(const kind_plan& plan, std::string_view ns) {
  if (plan.cluster_scoped())
    return std::size_t{0};
  std::optional<std::size_t> all_namespaces;
  for (std::size_t i = 0; i < plan.informers.size(); ++i) {
    if (plan.informers[i].namespace_ == ns)
      return i;
    if (plan.informers[i].namespace_.empty())
      all_namespaces = i;
  }
  if (all_namespaces)
    return *all_namespaces;
  return uncovered(plan, ns);
}

result<std::vector<std::size_t>> route_list(const kind_plan& plan, const list_options& options,
                                            const std::vector<std::string>& indexed_fields) {
  for (const auto& term : options.fields.requirements()) {
    if (term.op != field_op::equals)
      return make_error(errc::invalid_argument,
                        "non-exact field matches are not supported by the cache: \"" +
                            options.fields.to_string() + "\"");
    if (std::find(indexed_fields.begin(), indexed_fields.end(), term.field) == indexed_fields.end())
      return make_error(errc::no_index, "the cache for " + plan.describe() +
                                            " has no index for field \"" + term.field +
                                            "\": add one with index_field first");
  }
  if (plan.cluster_scoped() || !options.namespace_.empty()) {
    auto one = route_get(plan, options.namespace_);
    if (!one)
      return std::move(one).err();
    return std::vector<std::size_t>{*one};
  }
  std::vector<std::size_t> all(plan.informers.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  return all;
}

object_list merge_lists(std::vector<object_list> parts, std::size_t limit) {
  object_list out;
  if (parts.size() == 1) {
    out = std::move(parts.front()); // one informer's list is the answer as it is
  } else {
    std::size_t total = 0;
    for (const auto& part : parts)
      total += part.size();
    out.reserve(total);
    for (auto& part : parts)
      out.insert(out.end(), std::make_move_iterator(part.begin()),
                 std::make_move_iterator(part.end()));
  }
  if (limit > 0 && out.size() > limit)
    out.resize(limit);
  return out;
}

} // namespace kinformer
