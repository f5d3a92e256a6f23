#pragma once
// A Table (meta.k8s.io/v1) of objects: with a kind's printer columns (table_printer.hpp), or the
// API server's default for kinds without (k8s.io/apiserver/pkg/registry/rest
// .NewDefaultTableConvertor): columns Name and Created At. One row per object, each carrying the
// object in the form `includeObject` asks for: its PartialObjectMetadata by default, which
// kubectl reads namespaces and names from.

#include "protocol/object.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kinformer::apiserver {

struct table_printer;

enum class include_object { none, metadata, object };

// "" (the default: Metadata), "None", "Metadata" or "Object"; nullopt for anything else (400).
std::optional<include_object> parse_include_object(std::string_view value);

struct table_meta {
  std::string_view resource_version;
  std::string_view continue_token; // empty: none
  std::optional<std::int64_t> remaining_item_count;
};

// A Table of `objects`, by `printer` (full objects of its kind) or with the default columns
// (null). `with_columns` false leaves the column definitions out, as the API server does for
// every watch event after the first.
std::string table_json(std::span<const object_ptr> objects, include_object include,
                       const table_meta& meta, bool with_columns = true,
                       const table_printer* printer = nullptr);

} // namespace kinformer::apiserver
