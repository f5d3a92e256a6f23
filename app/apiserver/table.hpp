#pragma once
// The API server's default Table (meta.k8s.io/v1) for kinds without printer columns of their own
// (k8s.io/apiserver/pkg/registry/rest.NewDefaultTableConvertor): columns Name and Created At, one
// row per object, each row carrying the object in the form `includeObject` asks for: its
// PartialObjectMetadata by default, which kubectl reads namespaces and names from.

#include "protocol/object.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kinformer::apiserver {

enum class include_object { none, metadata, object };

// "" (the default: Metadata), "None", "Metadata" or "Object"; nullopt for anything else (400).
std::optional<include_object> parse_include_object(std::string_view value);

struct table_meta {
  std::string_view resource_version;
  std::string_view continue_token; // empty: none
  std::optional<std::int64_t> remaining_item_count;
};

// A Table of `objects`. `with_columns` false leaves the column definitions out, as the API server
// does for every watch event after the first.
std::string table_json(std::span<const object_ptr> objects, include_object include,
                       const table_meta& meta, bool with_columns = true);

} // namespace kinformer::apiserver
