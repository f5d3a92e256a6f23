#pragma once
// The cache's decisions, as plain functions (no CAF, unit-tested alone): which informers a kind
// gets under the cache options, and which of them answer a read. The cache actor
// (actors/cache.hpp) only carries these decisions out.
//
// Informers of a kind (controller-runtime's multiNamespaceCache and delegatingByGVKCache):
// - Cluster-scoped kinds get exactly one cluster-wide informer, whatever the namespaces.
// - Namespaced kinds get one informer per namespace: the by_object entry's namespaces when it
//   names some, else default_namespaces; none at all means one all-namespaces informer.
// - The all-namespaces entry "" next to explicit namespaces excludes each of them with a
//   `metadata.namespace!=X` term, so no object is stored (or delivered) twice.
// - Label and field selectors, transform and sync period: the by_object entry's when set, else
//   the defaults.
//
// Reads (controller-runtime's CacheReader and multiNamespaceCache):
// - A namespaced read in namespace N goes to N's informer, else to the all-namespaces
//   informer, else fails with errc::namespace_not_covered. A list across all namespaces merges
//   every informer.
// - A cluster-scoped kind's reads go to its one informer; a namespace in the read is ignored.
// - Field selectors: every term must be `=` (controller-runtime: "non-exact field matches are
//   not supported by the cache") and every field needs an index added with index_field, as
//   controller-runtime needs one: it makes no exception for metadata.name or
//   metadata.namespace either (they would otherwise read as "index does not exist").
// Refusals say what to change, with a code to branch on: errc::namespace_not_covered,
// errc::no_index (add the index), errc::invalid_argument (a selector the cache never serves).

#include "actors/cache_messages.hpp"
#include "protocol/rest_mapper.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

// One informer the cache runs for a kind.
struct planned_informer {
  std::string namespace_; // "" = all namespaces (minus the excluded ones), or cluster-scoped
  informer_config config;
};

// Everything the cache runs for one kind.
struct kind_plan {
  rest_mapping mapping;
  bool metadata_only = false;
  // Explicit namespaces in sorted order, then the all-namespaces informer (if any), so merged
  // lists come out in a stable order.
  std::vector<planned_informer> informers;
  // The resync period of subscriptions made through the cache that ask for none themselves.
  std::chrono::milliseconds sync_period{0};

  bool cluster_scoped() const { return mapping.scope == resource_scope::cluster; }
  // For errors, logs and stats: "v1, Kind=ConfigMap", with " (metadata)" for metadata-only.
  std::string describe() const;
};

// The resource a kind request names: by kind (an empty version: the preferred one) or by a
// kubectl-style resource name. Fails for unknown kinds and for resources that cannot be listed
// and watched.
result<rest_mapping> resolve_kind(rest_mapper& mapper, const kind_request& request);

// The by_object entry that applies to `mapping`: `by_object_mappings[i]` is entry i resolved
// (nullopt when it did not resolve). An entry for the same resource and the same projection
// (metadata_only) wins; else one for the same resource (controller-runtime keys ByObject by
// GVK, so its settings apply to the full and the metadata-only informers alike).
std::optional<std::size_t>
find_by_object(const std::vector<by_object_options>& by_object,
               const std::vector<std::optional<rest_mapping>>& by_object_mappings,
               const rest_mapping& mapping, bool metadata_only);

// The informers `mapping` gets under `options`; `by_object` is the entry that applies, if any.
kind_plan plan_kind(const cache_options& options, const rest_mapping& mapping, bool metadata_only,
                    const by_object_options* by_object);

// The informer (index into plan.informers) that holds the object `name` of namespace `ns`.
result<std::size_t> route_get(const kind_plan& plan, std::string_view ns);

// The informers (indexes into plan.informers) that answer a list; `indexed_fields` are the
// fields indexed with index_field for this kind.
result<std::vector<std::size_t>> route_list(const kind_plan& plan, const list_options& options,
                                            const std::vector<std::string>& indexed_fields);

// Merges per-informer answers (in informer order) and applies the limit (0: none).
object_list merge_lists(std::vector<object_list> parts, std::size_t limit);

} // namespace kinformer
