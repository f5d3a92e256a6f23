#pragma once
// The shape of a GET's answer, as its Accept header asks for it: the API server's content
// negotiation (k8s.io/apiserver/pkg/endpoints/handlers/negotiation), for the JSON this layer
// speaks. Clients ask for more than plain objects:
// - controller-runtime's metadata-only clients and client-go's metadata.NewForConfig send
//   `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` for lists and
//   `...as=PartialObjectMetadata...` for gets and watches;
// - kubectl sends `application/json;as=Table;g=meta.k8s.io;v=v1` for its columns.
// Anything the server cannot produce (protobuf, YAML, an unknown `as`) is skipped; when no media
// range is left, the answer is 406 NotAcceptable.

#include <optional>
#include <string_view>

namespace kinformer::apiserver {

enum class response_shape { object, partial_metadata, table };
enum class request_verb { get, list, watch };

// The first acceptable media range of `accept`, by descending q (order kept among equals): JSON
// (application/json, application/*, */*) without `as`, or with as=PartialObjectMetadata (get and
// watch), as=PartialObjectMetadataList (list) or as=Table, under g=meta.k8s.io and v=v1 or
// v1beta1. An empty header means objects. nullopt: nothing acceptable (406).
// `tables`: false where no Table is rendered (the simulator's answers to writes, like an API
// server without a table convertor): kubectl's request is then answered by its JSON fallback.
std::optional<response_shape> negotiate_shape(std::string_view accept, request_verb verb,
                                              bool tables = true);

// The 406 message, naming what is served.
inline constexpr std::string_view not_acceptable_message =
    "only the following media types are accepted: application/json, "
    "application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1, "
    "application/json;as=Table;g=meta.k8s.io;v=v1";

} // namespace kinformer::apiserver
