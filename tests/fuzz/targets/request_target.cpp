// An HTTP request target as the read API and the simulator receive it: path, query parameters,
// the selectors and numbers in them and the ListOptions they make; the same bytes as an Accept
// header and an includeObject value. Properties: no crash; the decoded path has no empty segment; a
// classified resource route names a resource; a metadata answer is negotiated only when the header
// asks for it.

#include "app/apiserver/list_query.hpp"
#include "app/apiserver/request_path.hpp"
#include "app/apiserver/response_form.hpp"
#include "app/apiserver/table.hpp"
#include "protocol/selector.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace kinformer;
using kinformer::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using apiserver::request_verb;
  for (auto verb : {request_verb::get, request_verb::list, request_verb::watch}) {
    auto shape = apiserver::negotiate_shape(text, verb);
    if (shape == apiserver::response_shape::partial_metadata)
      require(text.find("PartialObjectMetadata") != std::string_view::npos,
              "metadata negotiated without being asked for");
    if (shape == apiserver::response_shape::table)
      require(text.find("Table") != std::string_view::npos, "a table negotiated unasked");
  }
  (void)apiserver::parse_include_object(text);
  auto target = apiserver::parse_target(text);
  if (!target)
    return 0;
  for (const auto& segment : target->segments)
    require(!segment.empty(), "an empty path segment");
  auto route = apiserver::classify(target->segments);
  if (route.kind == apiserver::route_kind::resource)
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
  for (bool watch_path : {false, true}) {
    auto query = apiserver::parse_list_query(*target, watch_path);
    if (auto* failure = std::get_if<status>(&query))
      // 500 only for a watch from a resourceVersion that is not a number, as the real server.
      require(failure->code == 400 || failure->code == 422 ||
                  (failure->code == 500 &&
                   failure->message.starts_with("resourceVersion: Invalid value")),
              "ListOptions refused with another code");
    else if (watch_path)
      require(std::get<apiserver::list_query>(query).watch, "a /watch/ path read as a list");
  }
  return 0;
}
