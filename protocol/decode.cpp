#include "protocol/decode.hpp"

#include "protocol/object_check.hpp"

#include "protocol/list_decoder.hpp"
#include "protocol/object_scan.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <limits>

namespace json = boost::json;

namespace kinformer {

namespace {

// Deep enough for CRD schemas; shallow enough that copying and freeing a tree cannot exhaust the
// stack (Boost.JSON's default is 32, too shallow for some real objects).
constexpr std::size_t max_json_depth = 256;

const char* kind_name(const json::value& v) {
  switch (v.kind()) {
  case json::kind::null:
    return "null";
  case json::kind::bool_:
    return "a boolean";
  case json::kind::int64:
  case json::kind::uint64:
  case json::kind::double_:
    return "a number";
  case json::kind::string:
    return "a string";
  case json::kind::array:
    return "an array";
  case json::kind::object:
    return "an object";
  }
  return "unknown";
}

// Parses `text` into `arena`: one scratch allocation region per document, released at once.
// The parser is reused per thread: it keeps its internal stack between documents, so a parse
// allocates nothing but the tree.
result<json::value> parse_into(std::string_view text, json::monotonic_resource& arena,
                               std::string_view what) {
  thread_local json::parser parser = [] {
    json::parse_options options;
    options.max_depth = max_json_depth;
    return json::parser(json::storage_ptr(), options);
  }();
  json::parser& p = parser;
  p.reset(json::storage_ptr(&arena));
  boost::system::error_code ec;
  const std::size_t consumed = p.write(text.data(), text.size(), ec);
  if (ec) {
    p.reset(); // drops the partial tree, which lives in `arena`
    return make_error(errc::invalid_json, std::string(what) + ": " + ec.message() + " at offset " +
                                              std::to_string(consumed));
  }
  return p.release();
}

// A string member, or "" when absent or null; an error when of another type.
result<std::string_view> string_member(const json::object& o, std::string_view name,
                                       std::string_view where) {
  auto it = o.find(name);
  if (it == o.end() || it->value().is_null())
    return std::string_view{};
  if (const auto* s = it->value().if_string())
    return std::string_view(s->data(), s->size());
  return make_error(errc::invalid_object, std::string(where) + "." + std::string(name) +
                                              " must be a string, found " + kind_name(it->value()));
}

std::optional<std::int64_t> as_int64(const json::value& v) {
  if (const auto* i = v.if_int64())
    return *i;
  if (const auto* u = v.if_uint64();
      u && *u <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))
    return static_cast<std::int64_t>(*u);
  return std::nullopt;
}

std::optional<int> as_int(const json::value& v) {
  auto i = as_int64(v);
  if (!i || *i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max())
    return std::nullopt;
  return static_cast<int>(*i);
}

// Reads a Status leniently: a field of the wrong type is left at its default, because a Status
// is itself the report of a failure and losing the whole of it helps nobody.
status status_from(const json::object& o) {
  status out;
  auto text = [&](std::string_view name) {
    auto it = o.find(name);
    if (it == o.end() || !it->value().is_string())
      return std::string();
    return std::string(it->value().get_string());
  };
  if (auto it = o.find("code"); it != o.end())
    out.code = as_int(it->value()).value_or(0);
  out.status_ = text("status");
  out.reason = text("reason");
  out.message = text("message");
  auto dit = o.find("details");
  if (dit == o.end() || !dit->value().is_object())
    return out;
  const auto& details = dit->value().get_object();
  if (auto cit = details.find("causes"); cit != details.end() && cit->value().is_array()) {
    for (const auto& cause : cit->value().get_array()) {
      const auto* c = cause.if_object();
      if (!c)
        continue;
      // metav1.StatusCause's Type travels as "reason" on the wire; accept "type" as well.
      auto t = c->find("reason");
      if (t == c->end() || !t->value().is_string())
        t = c->find("type");
      if (t != c->end() && t->value().is_string())
        out.cause_types.emplace_back(t->value().get_string());
    }
  }
  if (auto rit = details.find("retryAfterSeconds"); rit != details.end())
    out.retry_after_seconds = as_int(rit->value());
  return out;
}

bool is_status(const json::object& o) {
  auto it = o.find("kind");
  return it != o.end() && it->value().is_string() && it->value().get_string() == "Status";
}

} // namespace

// ---- status ----

bool status::is_too_large_resource_version() const {
  // client-go's isTooLargeResourceVersionError: the cause type, or on servers before 1.19 a
  // Timeout (504) whose message says so.
  if (std::find(cause_types.begin(), cause_types.end(), "ResourceVersionTooLarge") !=
      cause_types.end())
    return true;
  return (code == 504 || reason == "Timeout") &&
         message.find("Too large resource version") != std::string::npos;
}

std::string status::describe() const {
  std::string out = reason.empty() ? std::string("Status") : reason;
  if (code != 0)
    out += " (" + std::to_string(code) + ")";
  if (!message.empty())
    out += ": " + message;
  if (!cause_types.empty()) {
    out += " [causes:";
    for (const auto& c : cause_types)
      out += " " + c;
    out += "]";
  }
  if (retry_after_seconds)
    out += " [retry after " + std::to_string(*retry_after_seconds) + "s]";
  return out;
}

std::optional<status> decode_status(std::string_view body) {
  json::monotonic_resource arena(body.size() + 256);
  auto parsed = parse_into(body, arena, "Status");
  if (!parsed)
    return std::nullopt;
  const auto* o = parsed->if_object();
  if (!o || !is_status(*o))
    return std::nullopt;
  return status_from(*o);
}

// ---- lists ----

result<item_type> decode_list_envelope(std::string_view envelope, list_page& page) {
  json::monotonic_resource arena(envelope.size() * 2 + 256);
  auto parsed = parse_into(envelope, arena, "List");
  if (!parsed)
    return std::move(parsed).err();
  const auto* root = parsed->if_object();
  if (!root)
    return make_error(errc::invalid_object,
                      std::string("a List must be a JSON object, found ") + kind_name(*parsed));
  if (is_status(*root))
    return make_error(errc::status, status_from(*root).describe());

  auto kind = string_member(*root, "kind", "List");
  if (!kind)
    return std::move(kind).err();
  auto api_version = string_member(*root, "apiVersion", "List");
  if (!api_version)
    return std::move(api_version).err();
  page.kind = std::string(*kind);

  if (auto mit = root->find("metadata"); mit != root->end() && !mit->value().is_null()) {
    const auto* meta = mit->value().if_object();
    if (!meta)
      return make_error(errc::invalid_object,
                        std::string("List metadata must be an object, found ") +
                            kind_name(mit->value()));
    auto rv = string_member(*meta, "resourceVersion", "List metadata");
    if (!rv)
      return std::move(rv).err();
    auto token = string_member(*meta, "continue", "List metadata");
    if (!token)
      return std::move(token).err();
    page.resource_version = std::string(*rv);
    page.continue_token = std::string(*token);
    if (auto rit = meta->find("remainingItemCount");
        rit != meta->end() && !rit->value().is_null()) {
      page.remaining_item_count = as_int64(rit->value());
      if (!page.remaining_item_count)
        return make_error(errc::invalid_object,
                          "List metadata.remainingItemCount must be a 64-bit integer, found " +
                              json::serialize(rit->value()));
    }
  }
  if (auto iit = root->find("items");
      iit != root->end() && !iit->value().is_null() && !iit->value().is_array())
    return make_error(errc::invalid_object,
                      std::string("List items must be an array, found ") + kind_name(iit->value()));
  item_type type;
  std::string_view item_kind = *kind;
  if (item_kind.size() > 4 && item_kind.ends_with("List")) {
    item_kind.remove_suffix(4);
    type.kind = std::string(item_kind);
  }
  type.api_version = std::string(*api_version);
  return type;
}

result<list_page> decode_list(std::string_view body, const decode_options& options) {
  list_decoder decoder(options);
  std::vector<object_ptr> items;
  if (auto fed = decoder.feed(body, items); !fed)
    return std::move(fed).err();
  auto page = decoder.finish(items);
  if (page)
    page->items = std::move(items);
  return page;
}

// ---- watch events ----

const char* to_string(event_type type) noexcept {
  switch (type) {
  case event_type::added:
    return "ADDED";
  case event_type::modified:
    return "MODIFIED";
  case event_type::deleted:
    return "DELETED";
  case event_type::bookmark:
    return "BOOKMARK";
  case event_type::error:
    return "ERROR";
  }
  return "UNKNOWN";
}

bool watch_event::is_initial_events_end() const {
  return type == event_type::bookmark && object &&
         object->meta().annotation("k8s.io/initial-events-end") == "true";
}

result<watch_event> decode_watch_event(std::string_view line, const decode_options& options) {
  // The line is scanned where simdjson can read past its end; only the object's own bytes are
  // then copied, into the object.
  thread_local std::string padded;
  const std::string_view text = padded_copy(padded, line);
  thread_local watch_line_scan scan;
  if (auto scanned = scan_watch_line(text, scan); !scanned) {
    if (scan.failed_in_object && scanned.err().code == errc::invalid_object)
      return make_error(errc::invalid_object,
                        (scan.type.empty() ? std::string("watch") : scan.type) +
                            " event object: " + scanned.err().message);
    if (scanned.err().code == errc::invalid_json)
      return make_error(errc::invalid_json, "watch event: " + scanned.err().message);
    return std::move(scanned).err();
  }
  if (scan.type.empty())
    return make_error(errc::invalid_object, "a watch event needs a string 'type'");
  watch_event event;
  const std::string_view type_text = scan.type;
  if (type_text == "ADDED")
    event.type = event_type::added;
  else if (type_text == "MODIFIED")
    event.type = event_type::modified;
  else if (type_text == "DELETED")
    event.type = event_type::deleted;
  else if (type_text == "BOOKMARK")
    event.type = event_type::bookmark;
  else if (type_text == "ERROR")
    event.type = event_type::error;
  else
    return make_error(errc::invalid_object,
                      "unknown watch event type '" + std::string(type_text) + "'");
  if (!scan.object_is_object)
    return make_error(errc::invalid_object, "a watch event of type " + std::string(type_text) +
                                                " needs an 'object' that is a JSON object, found " +
                                                scan.object_found);
  const std::string_view object_text =
      text.substr(scan.object.object.begin, scan.object.object.end - scan.object.object.begin);
  if (event.type == event_type::error) {
    json::monotonic_resource arena(object_text.size() * 2 + 256);
    auto parsed = parse_into(object_text, arena, "watch event");
    if (!parsed)
      return std::move(parsed).err();
    event.error = status_from(parsed->get_object());
    return event;
  }
  auto obj = object::from_scan(text, scan.object, options.transform, options.packer);
  if (!obj)
    return make_error(obj.err().code,
                      std::string(type_text) + " event object: " + obj.err().message);
  if (options.expect && event.type != event_type::bookmark)
    if (auto checked = check_object(**obj, *options.expect); !checked)
      return make_error(errc::invalid_object,
                        std::string(type_text) + " event: " + checked.err().message);
  event.object = std::move(*obj);
  return event;
}

} // namespace kinformer
