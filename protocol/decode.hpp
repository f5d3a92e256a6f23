#pragma once
// Decoders for what the API server sends: List responses, watch event lines, Status errors.
// Each returns a value or a clear error; malformed, truncated or wrongly typed JSON never throws.

#include "protocol/object.hpp"
#include "protocol/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

// A metav1.Status failure.
struct status {
  int code = 0;        // HTTP code carried in the Status (410, 404, 504, ...)
  std::string status_; // "Failure" / "Success"
  std::string reason;  // "Expired", "Gone", "NotFound", "TooManyRequests", "Timeout", ...
  std::string message;
  std::vector<std::string>
      cause_types; // details.causes[].reason (StatusCause.Type), e.g. "ResourceVersionTooLarge"
  std::optional<int> retry_after_seconds; // details.retryAfterSeconds

  bool is_expired() const { return code == 410 || reason == "Expired" || reason == "Gone"; }
  bool is_too_large_resource_version() const;
  std::string describe() const;
};

// Decodes `body` as a Status when it is one (kind == "Status"); nullopt otherwise.
std::optional<status> decode_status(std::string_view body);

struct list_page {
  std::string kind;             // "PodList", "PartialObjectMetadataList", ...
  std::string resource_version; // metadata.resourceVersion
  std::string continue_token;   // metadata.continue; empty on the last page
  std::optional<std::int64_t> remaining_item_count;
  std::vector<object_ptr> items;
};

struct object_expectations;
class held_objects_slot;

struct decode_options {
  const object_transform* transform = nullptr; // applied to every object before it is frozen
  // Checked on every list item and on the object of every ADDED, MODIFIED and DELETED event
  // (protocol/object_check.hpp): one that fails is an errc::invalid_object error.
  const object_expectations* expect = nullptr;
  // List items only: what the client already holds (held_objects.hpp), read as items arrive; an
  // item at the resourceVersion of the held object so named is handed on as that object.
  const held_objects_slot* held = nullptr;
  // Objects keep their text compressed once it has a dictionary (object_packer.hpp).
  object_packer* packer = nullptr;
};

// Decodes a List response body. A Status body comes back as an errc::status error whose message
// is the Status's describe(). (list_decoder.hpp decodes one as its bytes arrive.)
result<list_page> decode_list(std::string_view body, const decode_options& options = {});

// Reads a List's envelope (its items are not looked at) into `page`: kind, resourceVersion,
// continue, remainingItemCount; returns the type its items carry when they name none.
result<item_type> decode_list_envelope(std::string_view envelope, list_page& page);

enum class event_type { added, modified, deleted, bookmark, error };
const char* to_string(event_type type) noexcept;

struct watch_event {
  event_type type = event_type::added;
  object_ptr object;           // absent for ERROR
  std::optional<status> error; // present for ERROR

  // For BOOKMARK: true when annotated k8s.io/initial-events-end: "true".
  bool is_initial_events_end() const;
};

// Decodes one watch line: {"type": "...", "object": {...}}.
result<watch_event> decode_watch_event(std::string_view line, const decode_options& options = {});

} // namespace kinformer
