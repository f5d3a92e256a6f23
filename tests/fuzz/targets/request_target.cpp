// An HTTP request target as the read API and the simulator receive it: path, query parameters,
// and the selectors and numbers in them.
// Properties: no crash; the decoded path has no empty segment; a classified resource route names
// a resource.

#include "app/kubesim/request_path.hpp"
#include "protocol/selector.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace kinformer;
using kinformer::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto target = sim::parse_target(text);
  if (!target)
    return 0;
  for (const auto& segment : target->segments)
    require(!segment.empty(), "an empty path segment");
  auto route = sim::classify(target->segments);
  if (route.kind == sim::route_kind::resource)
    require(!route.resource.resource.empty(), "a resource route without a resource");
  for (const char* name : {"watch", "allowWatchBookmarks", "sendInitialEvents"})
    (void)target->flag(name);
  for (const char* name : {"limit", "timeoutSeconds"})
    if (auto n = target->integer(name); n && *n)
      require(**n >= 0, "a negative integer parameter");
  if (auto labels = target->param("labelSelector"))
    (void)label_selector::parse(*labels);
  if (auto fields = target->param("fieldSelector"))
    (void)field_selector::parse(*fields);
  return 0;
}
