// Get and list answers rendered in the shape asked for. See resource_answer.hpp.

#include "app/apiserver/resource_answer.hpp"

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/table_printer.hpp"
#include "protocol/json_string.hpp"

#include <deque>
#include <optional>
#include <string_view>
#include <vector>

namespace kinformer::apiserver {

http_response failure_response(const status& s) {
  http_response response;
  response.status = s.code > 0 ? s.code : 500;
  response.body = status_json(s);
  if (s.retry_after_seconds)
    response.headers.emplace_back("Retry-After", std::to_string(*s.retry_after_seconds));
  return response;
}

http_response json_response(std::string body, int code) {
  http_response response;
  response.status = code;
  response.body = std::move(body);
  return response;
}

const table_printer* printer_of(const resource_request& request, bool metadata_only) {
  return metadata_only ? nullptr : printer_for(request.info.gvr.group, request.info.kind);
}

http_response object_response(const resource_request& request, const object_answer& answer,
                              int code) {
  const object_ptr& obj = answer.object;
  switch (request.shape) {
  case response_shape::table:
    return json_response(table_json(std::span<const object_ptr>(&obj, 1), request.include,
                                    {obj->meta().resource_version, {}, {}}, true,
                                    printer_of(request, answer.metadata_only)),
                         code);
  case response_shape::partial_metadata:
    if (!answer.metadata_only)
      return json_response(obj->partial_metadata_json(), code);
    break;
  case response_shape::object:
    break;
  }
  return json_response(obj->to_json(), code);
}

namespace {

// The real server's JSON list items name no kind and apiVersion: the list names them once. Items
// that start with them (kinformer puts them in front of listed items, watch objects carry them
// first) are written from after them, behind a "{" of the list's own.
class type_members {
public:
  type_members(std::string_view kind, std::string_view api_version)
      : kind_first_("{\"kind\":" + json_string(kind) +
                    ",\"apiVersion\":" + json_string(api_version) + ","),
        version_first_("{\"apiVersion\":" + json_string(api_version) +
                       ",\"kind\":" + json_string(kind) + ",") {}

  // What follows the type members when `text` starts with them; nullopt when it does not.
  std::optional<std::string_view> rest_of(std::string_view text) const {
    for (const auto& prefix : {std::string_view(kind_first_), std::string_view(version_first_)})
      if (text.starts_with(prefix))
        return text.substr(prefix.size());
    return std::nullopt;
  }

private:
  std::string kind_first_, version_first_;
};

} // namespace

http_response list_response(const resource_request& request, list_answer answer) {
  const auto items = answer.items;
  if (request.shape == response_shape::table)
    return json_response(
        table_json(items, request.include,
                   {answer.resource_version, answer.continue_token, answer.remaining_item_count},
                   true, printer_of(request, answer.metadata_only)));
  const bool partial = request.shape == response_shape::partial_metadata;
  struct owner {
    std::string head;
    std::shared_ptr<const void> items;
    // Metadata cut from full objects, or packed objects' texts; a deque, so that no string moves
    // once a piece names it.
    std::deque<std::string> cut;
  };
  auto held = std::make_shared<owner>();
  const std::string kind = partial ? "PartialObjectMetadataList" : request.info.list_kind();
  const std::string api_version = partial ? "meta.k8s.io/v1" : request.info.gvr.gv().api_version();
  held->head = "{\"kind\":" + json_string(kind) + ",\"apiVersion\":" + json_string(api_version) +
               ",\"metadata\":{\"resourceVersion\":" + json_string(answer.resource_version);
  if (!answer.continue_token.empty())
    held->head += ",\"continue\":" + json_string(answer.continue_token);
  if (answer.remaining_item_count)
    held->head += ",\"remainingItemCount\":" + std::to_string(*answer.remaining_item_count);
  held->head += "},\"items\":[";
  held->items = std::move(answer.owner);
  // Each item's text: where it lies in the item, or else made here (and held with the pieces).
  const bool cut_metadata = partial && !answer.metadata_only;
  auto text_of = [&](const object& item) -> std::string_view {
    if (cut_metadata)
      return held->cut.emplace_back(item.partial_metadata_json());
    if (item.packed())
      return held->cut.emplace_back(item.to_json());
    return item.text_in_place();
  };
  const type_members typed(request.info.kind, request.info.gvr.gv().api_version());
  http_response reply;
  reply.body_pieces.reserve(2 * items.size() + 2);
  reply.body_pieces.push_back(held->head);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto text = text_of(*items[i]);
    const auto rest = partial ? std::nullopt : typed.rest_of(text);
    if (rest)
      reply.body_pieces.push_back(i != 0 ? ",{" : "{");
    else if (i != 0)
      reply.body_pieces.push_back(",");
    reply.body_pieces.push_back(rest ? *rest : text);
  }
  reply.body_pieces.push_back("]}\n");
  reply.pieces_owner = std::move(held);
  return reply;
}

} // namespace kinformer::apiserver
