#pragma once
// Decodes a List response as its bytes arrive: each item becomes an object as soon as its last
// byte is in, and the body is never held whole (only the item being received, and the List's
// envelope: kind, apiVersion, metadata).
//
//   list_decoder decoder(options);
//   while (bytes arrive) if (!decoder.feed(bytes, items)) -> the error; hand `items` on
//   auto page = decoder.finish(items); // the envelope: resourceVersion, continue, ...
//
// Errors are the same as decode_list's: errc::invalid_json for a body that is not JSON or ends
// early, errc::invalid_object for a wrong shape ("List items[3]: metadata.name must be a
// string"), errc::status for a Status body, errc::too_large for an item over the limit. After
// an error the decoder stays failed.

#include "protocol/decode.hpp"
#include "protocol/json_nesting.hpp"
#include "protocol/object.hpp"
#include "protocol/result.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

class list_decoder {
public:
  explicit list_decoder(decode_options options = {},
                        std::size_t max_item_bytes = std::size_t{64} << 20);

  // Takes the next bytes of the body; the items they complete are appended to `out`.
  status_result feed(std::string_view bytes, std::vector<object_ptr>& out);
  // The body is complete: decodes the envelope. The page's items are empty: every item went out
  // through feed(). `items` are the ones still held by the caller: when the List named its kind
  // only after its items, those that name no type get it here (see types_known()).
  result<list_page> finish(std::vector<object_ptr>& items);

  std::size_t items_decoded() const noexcept { return items_; }
  // False when items arrived before the List's kind (no API server sends that): their type may
  // still be filled in by finish(), so they should be held, not handed on, until then.
  bool types_known() const noexcept { return !late_type_; }
  // True once the items have begun. The continue token the List gave before them (the API
  // server writes its metadata first), empty when none: a pager may ask for the next page while
  // this one is still arriving.
  bool items_begun() const noexcept { return items_begun_; }
  const std::string& continue_before_items() const noexcept { return continue_before_items_; }

private:
  enum class phase { start, envelope, items, after_items, done, failed };

  // Scans `source` (buffer_, or the caller's bytes when nothing is held) from resume_at_, then
  // keeps in buffer_ only what an unfinished item needs.
  status_result scan(std::string_view source, std::vector<object_ptr>& out);
  status_result scan_envelope(std::string_view source, std::size_t& at);
  status_result scan_items(std::string_view source, std::size_t& at, std::vector<object_ptr>& out);
  status_result start_items();
  status_result fail(error e);
  status_result check_item(const object& item) const;
  void compact(std::string_view source);

  decode_options options_;
  std::size_t max_item_bytes_;
  phase phase_ = phase::start;

  std::string buffer_;      // the start of an item the bytes fed so far ended inside
  std::size_t copied_ = 0;  // envelope bytes of the source already appended to envelope_
  std::string envelope_;    // the List without its items ("items":[])
  std::string current_key_; // the last key read at the List's top level
  bool expect_key_ = false; // at the top level, the next string is a key
  bool in_string_ = false;  // scanning inside a string of the envelope
  bool escaped_ = false;    // the previous byte was a backslash inside a string
  int depth_ = 0;           // nesting inside the List object (1: its members)
  json_nesting item_;       // nesting inside the current item (depth 0: between items)
  std::size_t item_begin_ = 0;
  std::size_t resume_at_ = 0; // where scanning resumes in buffer_
  std::optional<error> failure_;
  std::size_t items_ = 0;
  item_type fill_;       // the items' type when they name none
  std::string key_text_; // a top-level key being read
  bool in_key_ = false;
  bool late_type_ = false;
  bool items_begun_ = false;
  std::string continue_before_items_;
};

} // namespace kinformer
