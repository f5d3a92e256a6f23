#pragma once
// The REST mapper: which resource serves a kind, and which kind a kubectl-style resource name
// ("pods", "po", "deployments.apps", "deployments.v1.apps", "widgets.example.com") means. It reads
// discovery through an injected fetch function and re-reads it, at most once per lookup, when a
// name is unknown (a CRD installed after start).

#include "protocol/discovery.hpp"
#include "protocol/gvk.hpp"
#include "protocol/result.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

struct rest_mapping {
  group_version_resource resource;
  group_version_kind kind;
  resource_scope scope = resource_scope::namespaced;
  std::vector<std::string> verbs; // "list", "watch", ...
};

// GETs a discovery path ("/api", "/apis/apps/v1") and returns the body.
using discovery_fetch = std::function<result<std::string>(const std::string& path)>;

class rest_mapper {
public:
  explicit rest_mapper(discovery_fetch fetch);

  // Re-reads all of discovery. Fails when /api or /apis cannot be read; a group version that
  // fails alone is skipped and remembered in failed_group_versions() (client-go tolerates the
  // same: one broken aggregated API must not hide the rest).
  status_result refresh();

  // The resource serving `kind`. An empty version picks the group's preferred version.
  result<rest_mapping> mapping_for(const group_version_kind& kind);

  // A kubectl-style resource argument: plural, singular or short name, optionally qualified by
  // group ("deployments.apps") or version and group ("deployments.v1.apps"). Case-insensitive.
  result<rest_mapping> resource_for(std::string_view argument);

  // Group versions whose discovery document could not be read at the last refresh.
  const std::vector<error>& failed_group_versions() const noexcept { return failures_; }
  // How many times discovery was read.
  int refresh_count() const noexcept { return refreshes_; }

private:
  struct entry {
    rest_mapping mapping;
    std::string singular_name; // lower case
    std::vector<std::string> short_names;
    bool preferred = false; // the group's preferred version
  };

  template <class Match>
  result<rest_mapping> lookup(Match match, const std::string& what);
  status_result read_group_version(const group_version& gv, bool preferred);
  std::string failure_note() const;

  discovery_fetch fetch_;
  // Core group first, then groups in the server's order; preferred version first in each group.
  std::vector<entry> entries_;
  std::vector<error> failures_;
  bool loaded_ = false;
  int refreshes_ = 0;
};

} // namespace kinformer
