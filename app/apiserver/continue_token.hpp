#pragma once
// List continue tokens in the API server's own format: base64url (no padding) of
// {"v":"meta.k8s.io/v1","rv":<snapshot revision>,"start":"<last key>\u0000"}, so a page resumes
// strictly after the last key it returned, at the same snapshot. The simulator reads its
// snapshot from its history at rv; kinformerd's read API, which keeps paged lists in memory,
// adds the kept snapshot's id as "snapshot" (clients treat tokens as opaque).

#include "protocol/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kinformer::apiserver {

struct continue_token {
  std::uint64_t resource_version = 0;    // the snapshot every page of the list is served at
  std::string start_key;                 // the first key of the next page (inclusive)
  std::optional<std::uint64_t> snapshot; // the read API's kept snapshot

  // A token that resumes after `last_key`.
  static continue_token after(std::uint64_t resource_version, std::string_view last_key,
                              std::optional<std::uint64_t> snapshot = std::nullopt);
  std::string encode() const;
  // Fails with invalid_argument on anything that is not a token this format produces.
  static result<continue_token> decode(std::string_view text);
};

} // namespace kinformer::apiserver
