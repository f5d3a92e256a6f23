#include "protocol/list_decoder.hpp"

#include "protocol/held_objects.hpp"
#include "protocol/json_nesting.hpp"
#include "protocol/json_value_kind.hpp"
#include "protocol/object_check.hpp"
#include "protocol/object_scan.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kinformer {

namespace {

// The first '"' or '\\' in [p, p + n), or n: inside a string nothing else matters.
std::size_t find_quote_or_backslash(const char* p, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const int mask =
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (mask != 0)
      return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < n; ++i)
    if (p[i] == '"' || p[i] == '\\')
      return i;
  return n;
}

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

} // namespace

list_decoder::list_decoder(decode_options options, std::size_t max_item_bytes)
    : options_(options), max_item_bytes_(max_item_bytes) {}

status_result list_decoder::fail(error e) {
  phase_ = phase::failed;
  buffer_.clear();
  buffer_.shrink_to_fit();
  failure_ = e;
  return e;
}

status_result list_decoder::feed(std::string_view bytes, std::vector<object_ptr>& out) {
  if (phase_ == phase::failed)
    return make_error(errc::invalid_argument, "the list decoder already failed");
  if (!buffer_.empty()) {
    // An item the last bytes cut off: complete it with as few of these as it takes (a look-ahead
    // with a copy of the scan's state), and take the rest where they lie.
    json_nesting ahead = item_;
    bool ended = false;
    const std::size_t through = ahead.scan(bytes.data(), bytes.size(), ended);
    const std::size_t take = ended ? through : bytes.size();
    buffer_.append(bytes.data(), take);
    bytes.remove_prefix(take);
    if (auto scanned = scan(buffer_, out); !scanned)
      return scanned;
    if (bytes.empty())
      return ok_v;
  }
  // Nothing held: the bytes are scanned where they lie, and only an item they end inside is kept.
  return scan(bytes, out);
}

// Drops what is consumed: between items everything scanned, inside an item what precedes it
// (which is kept in buffer_ when `source` is the caller's bytes).
void list_decoder::compact(std::string_view source) {
  if (phase_ == phase::items && item_.depth != 0) {
    if (source.data() == buffer_.data())
      buffer_.erase(0, item_begin_);
    else
      buffer_.assign(source.substr(item_begin_));
    resume_at_ -= item_begin_;
    item_begin_ = 0;
    return;
  }
  if (phase_ != phase::items)
    envelope_.append(source.substr(copied_));
  buffer_.clear();
  copied_ = 0;
  resume_at_ = 0;
}

status_result list_decoder::scan(std::string_view source, std::vector<object_ptr>& out) {
  // Inside an item, the bytes kept from before were already scanned: resume after them.
  std::size_t at = resume_at_;
  while (at < source.size()) {
    auto r = phase_ == phase::items ? scan_items(source, at, out) : scan_envelope(source, at);
    if (!r)
      return r;
  }
  resume_at_ = at;
  compact(source);
  return ok_v;
}

status_result list_decoder::scan_envelope(std::string_view source, std::size_t& at) {
  const char* p = source.data();
  const std::size_t n = source.size();
  // Read once a call (a socket read's worth of items): the holder may fill the slot meanwhile.
  const auto held = options_.held ? options_.held->current() : nullptr;
  while (at < n) {
    if (in_string_) {
      if (escaped_) {
        if (in_key_)
          key_text_ += p[at];
        escaped_ = false;
        ++at;
        continue;
      }
      const std::size_t skip = find_quote_or_backslash(p + at, n - at);
      if (in_key_)
        key_text_.append(p + at, skip);
      at += skip;
      if (at == n)
        return ok_v;
      if (p[at] == '\\') {
        escaped_ = true;
        if (in_key_)
          key_text_ += '\\';
      } else {
        in_string_ = false;
        if (in_key_) {
          in_key_ = false;
          current_key_ = key_text_;
        }
      }
      ++at;
      continue;
    }
    const char c = p[at];
    if (is_space(c)) {
      ++at;
      continue;
    }
    if (phase_ == phase::done)
      return fail(make_error(errc::invalid_json, "List: trailing characters after the JSON value"));
    if (phase_ == phase::start) {
      if (c != '{')
        return fail(
            make_error(errc::invalid_object,
                       std::string("a List must be a JSON object, found ") + json_value_kind(c)));
      phase_ = phase::envelope;
    }
    ++at;
    switch (c) {
    case '"':
      in_string_ = true;
      if (depth_ == 1 && expect_key_) {
        in_key_ = true;
        expect_key_ = false;
        key_text_.clear();
      }
      break;
    case ',':
      expect_key_ = depth_ == 1;
      break;
    case '{':
      expect_key_ = ++depth_ == 1;
      break;
    case '[':
      if (depth_ == 1 && current_key_ == "items") {
        if (phase_ == phase::after_items)
          return fail(make_error(errc::invalid_object, "List: two \"items\" members"));
        // The envelope keeps "items":[ and gets its ] when the items end.
        envelope_.append(source.substr(copied_, at - copied_));
        copied_ = at;
        ++depth_;
        phase_ = phase::items;
        return start_items();
      }
      ++depth_;
      break;
    case '}':
    case ']':
      if (--depth_ == 0)
        phase_ = phase::done;
      if (depth_ < 0)
        return fail(make_error(errc::invalid_json, "List: unbalanced brackets"));
      break;
    default:
      break;
    }
  }
  return ok_v;
}

status_result list_decoder::start_items() {
  // The type items lack comes from the envelope read so far (kind and apiVersion come first
  // from every API server): the prefix, closed, is a List of its own.
  list_page head;
  auto type = decode_list_envelope(envelope_ + "]}", head);
  if (!type)
    return fail(std::move(type).err());
  fill_ = std::move(*type);
  late_type_ = fill_.kind.empty();
  items_begun_ = true;
  continue_before_items_ = std::move(head.continue_token);
  return ok_v;
}

status_result list_decoder::scan_items(std::string_view source, std::size_t& at,
                                       std::vector<object_ptr>& out) {
  const char* p = source.data();
  const std::size_t n = source.size();
  // Read once a call (a socket read's worth of items): the holder may fill the slot meanwhile.
  const auto held = options_.held ? options_.held->current() : nullptr;
  while (at < n) {
    if (item_.depth == 0) {
      const char c = p[at];
      if (is_space(c) || c == ',') {
        ++at;
        continue;
      }
      if (c == ']') {
        ++at;
        --depth_;
        envelope_ += ']';
        copied_ = at;
        phase_ = phase::after_items;
        return ok_v;
      }
      if (c != '{')
        return fail(make_error(errc::invalid_object, "List items[" + std::to_string(items_) +
                                                         "] must be an object, found " +
                                                         json_value_kind(c)));
      item_begin_ = at;
      item_ = json_nesting{1, false, false};
      ++at;
      continue;
    }
    bool ended = false;
    at += item_.scan(p + at, n - at, ended);
    if (ended) {
      if (at - item_begin_ > max_item_bytes_)
        return fail(make_error(errc::too_large, "List items[" + std::to_string(items_) +
                                                    "] is larger than " +
                                                    std::to_string(max_item_bytes_) + " bytes"));
      // Bytes after the item (the next ones) pad it for the scan; at the bytes' end it is
      // copied to be padded.
      const std::string_view item(p + item_begin_, at - item_begin_);
      auto obj =
          n - at >= scan_padding
              ? object::parse_padded(item, options_.transform, &fill_, held.get(), options_.packer)
              : object::parse(item, options_.transform, &fill_, held.get(), options_.packer);
      if (!obj)
        return fail(make_error(obj.err().code,
                               "List items[" + std::to_string(items_) + "]: " + obj.err().message));
      if (auto checked = check_item(**obj); !checked)
        return fail(make_error(errc::invalid_object, "List items[" + std::to_string(items_) +
                                                         "]: " + checked.err().message));
      out.push_back(std::move(*obj));
      ++items_;
    }
  }
  if (item_.depth != 0 && n - item_begin_ > max_item_bytes_)
    return fail(make_error(errc::too_large, "List items[" + std::to_string(items_) +
                                                "] is larger than " +
                                                std::to_string(max_item_bytes_) + " bytes"));
  return ok_v;
}

status_result list_decoder::check_item(const object& item) const {
  if (!options_.expect)
    return ok_v;
  if (!late_type_ || !item.kind().empty() || !item.api_version().empty())
    return check_object(item, *options_.expect);
  // The List names its kind after its items: the kind is checked in finish().
  object_expectations untyped = *options_.expect;
  untyped.kind.clear();
  untyped.api_version.clear();
  return check_object(item, untyped);
}

result<list_page> list_decoder::finish(std::vector<object_ptr>& items) {
  if (phase_ == phase::failed)
    return *failure_;
  if (phase_ != phase::done)
    return fail(make_error(errc::invalid_json, phase_ == phase::start
                                                   ? "List: the body is empty"
                                                   : "List: the body ended early (truncated)"))
        .err();
  list_page page;
  auto type = decode_list_envelope(envelope_, page);
  if (!type)
    return std::move(type).err();
  if (late_type_ && !type->kind.empty()) {
    for (auto& item : items) {
      if (!item->kind().empty() || !item->api_version().empty())
        continue;
      const auto text = item->json_text();
      auto filled = object::parse(text.view(), nullptr, &*type, nullptr, options_.packer);
      if (filled) // the item was valid, so this cannot fail
        item = std::move(*filled);
    }
  }
  if (late_type_ && options_.expect) // the kinds check_item could not see yet
    for (std::size_t i = 0; i < items.size(); ++i)
      if (auto checked = check_object(*items[i], *options_.expect); !checked)
        return fail(make_error(errc::invalid_object,
                               "List items[" + std::to_string(i) + "]: " + checked.err().message))
            .err();
  return page;
}

} // namespace kinformer
