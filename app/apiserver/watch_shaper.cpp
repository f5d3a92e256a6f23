// Watch lines in the shape asked for. See watch_shaper.hpp.

#include "app/apiserver/watch_shaper.hpp"

#include "app/apiserver/resource_answer.hpp"
#include "app/apiserver/watch_event.hpp"
#include "app/apiserver/watch_projection.hpp"

namespace kinformer::apiserver {

watch_shaper::watch_shaper(const resource_request& request, bool metadata_only)
    : request_(request), metadata_only_(metadata_only),
      printer_(printer_of(request, metadata_only)) {}

std::string watch_shaper::shaped(const object_ptr& obj) {
  switch (request_.shape) {
  case response_shape::table: {
    const bool first = !columns_sent_;
    columns_sent_ = true;
    return table_json(std::span<const object_ptr>(&obj, 1), request_.include,
                      {obj->meta().resource_version, {}, {}}, first, printer_);
  }
  case response_shape::partial_metadata:
    if (!metadata_only_)
      return obj->partial_metadata_json();
    break;
  case response_shape::object:
    break;
  }
  return obj->to_json();
}

byte_pieces watch_shaper::event_line(event_type type, const object_ptr& obj) {
  if (request_.shape == response_shape::object ||
      (metadata_only_ && request_.shape != response_shape::table)) {
    if (!obj->packed())
      return watch_event_pieces(type, obj, obj->text_in_place());
    auto text = std::make_shared<const std::string>(obj->to_json()); // decompressed, once
    return watch_event_pieces(type, text, *text);
  }
  return byte_pieces(watch_event_line(type, shaped(obj)));
}

byte_pieces watch_shaper::change_line(event_type type, const object_ptr& now,
                                      const object_ptr& before) {
  const bool matches_now = request_.matches(*now);
  const bool matched_before =
      type == event_type::modified &&
      (before ? request_.matches(*before) : matches_now && !request_.selects_by_content());
  const watch_projection projection = project_change(type, matches_now, matched_before);
  if (projection == watch_projection::none)
    return {};
  const event_type shown = projected_type(projection, type);
  if (projection != watch_projection::stopped_matching)
    return event_line(shown, now);
  auto stamped = with_resource_version(*before, now->meta().resource_version);
  if (request_.shape == response_shape::object)
    return byte_pieces(watch_event_line(shown, stamped));
  auto reparsed = object::parse(stamped); // a valid object with a new version: cannot fail
  return reparsed ? event_line(shown, *reparsed) : byte_pieces(watch_event_line(shown, stamped));
}

std::string watch_shaper::bookmark_line(std::string_view resource_version,
                                        bool initial_events_end) const {
  if (request_.shape == response_shape::table)
    return watch_event_line(event_type::bookmark,
                            table_json({}, request_.include, {resource_version, {}, {}}, false));
  const bool partial = request_.shape == response_shape::partial_metadata;
  return watch_event_line(
      event_type::bookmark,
      bookmark_object(partial ? "PartialObjectMetadata" : request_.info.kind,
                      partial ? "meta.k8s.io/v1" : request_.info.gvr.gv().api_version(),
                      resource_version, initial_events_end));
}

} // namespace kinformer::apiserver
