#include "protocol/decode.hpp"

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
                               std::string_view what, std::size_t max_depth = max_json_depth) {
  thread_local json::parser parser = [] {
    json::parse_options options;
    options.max_depth = max_json_depth;
    return json::parser(json::storage_ptr(), options);
  }();
  thread_local json::parser shallow_parser = [] {
    json::parse_options options;
    options.max_depth = max_json_depth - 2;
    return json::parser(json::storage_ptr(), options);
  }();
  json::parser& p = max_depth == max_json_depth ? parser : shallow_parser;
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

// The upstream of a document arena: owns the arena's first block, allocated at exactly the size
// asked for, and takes any further block from the heap. The arena's own first block would be
// rounded up to a power of two, wasting up to half of it for as long as the object that keeps
// the arena lives. (monotonic_resource is final, so the block cannot live in a subclass.)
class first_block_owner final : public json::memory_resource {
public:
  explicit first_block_owner(std::unique_ptr<unsigned char[]> block) : block_(std::move(block)) {}

private:
  void* do_allocate(std::size_t n, std::size_t align) override { return heap_->allocate(n, align); }
  void do_deallocate(void* p, std::size_t n, std::size_t align) override {
    heap_->deallocate(p, n, align);
  }
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::unique_ptr<unsigned char[]> block_;
  json::storage_ptr heap_; // the default resource
};

// The arena a document of `text_bytes` is parsed into and then kept by its object. A
// Kubernetes object's tree takes 2.8 times its text (measured on generated pods), so one block
// of three times the text almost always holds it; a larger tree continues in a second block.
std::unique_ptr<json::monotonic_resource> document_arena(std::size_t text_bytes) {
  const std::size_t size = 3 * text_bytes + 512;
  std::unique_ptr<unsigned char[]> block(new unsigned char[size]);
  unsigned char* first = block.get();
  return std::make_unique<json::monotonic_resource>(
      first, size, json::make_shared_resource<first_block_owner>(std::move(block)));
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

// Builds the frozen object: the transform runs in place on the scratch tree, then the object
// copies the result into its own arena (one copy, no intermediate tree).
result<object_ptr> freeze(json::value& scratch, const decode_options& options) {
  if (options.transform && *options.transform)
    (*options.transform)(scratch);
  return object::from_json(static_cast<const json::value&>(scratch));
}

// PodList items carry no kind or apiVersion; client-go's unstructured decoder fills both from the
// list (kind minus "List") when both are missing, and leaves items that name either alone.
void fill_item_type(json::object& item, std::string_view item_kind, std::string_view api_version) {
  auto missing = [&](std::string_view name) {
    auto it = item.find(name);
    return it == item.end() || it->value().is_null() ||
           (it->value().is_string() && it->value().get_string().empty());
  };
  if (item_kind.empty() || !missing("kind") || !missing("apiVersion"))
    return;
  item["kind"] = item_kind;
  item["apiVersion"] = api_version;
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

namespace {

// The text of a List's items, found by a structural scan of the body: strings and nesting
// only, no validation (every piece is parsed afterwards, which validates it). With it, each item
// is parsed straight into the arena its object keeps, instead of parsing the page into one tree
// and copying every item out of it.
struct list_layout {
  std::size_t items_begin = 0; // the '[' of the items array
  std::size_t items_end = 0;   // one past its ']'
  std::vector<std::string_view> items;
};

class list_scanner {
public:
  explicit list_scanner(std::string_view text) : text_(text) {}

  // nullopt when the body has not the shape of a List whose items are an array (or has two
  // "items" keys): the caller then decodes the body whole, which reports any error precisely.
  std::optional<list_layout> scan() {
    list_layout layout;
    bool items_seen = false;
    if (!take('{'))
      return std::nullopt;
    if (take('}'))
      return finish(layout, items_seen);
    for (;;) {
      skip_space();
      const std::size_t key_begin = at_;
      if (!skip_string())
        return std::nullopt;
      const std::string_view key = text_.substr(key_begin, at_ - key_begin);
      if (!take(':'))
        return std::nullopt;
      skip_space();
      if (key == "\"items\"") {
        if (items_seen || !scan_items(layout))
          return std::nullopt;
        items_seen = true;
      } else if (!skip_value()) {
        return std::nullopt;
      }
      if (take(','))
        continue;
      if (take('}'))
        return finish(layout, items_seen);
      return std::nullopt;
    }
  }

private:
  std::optional<list_layout> finish(list_layout& layout, bool items_seen) {
    skip_space();
    if (!items_seen || at_ != text_.size())
      return std::nullopt;
    return std::move(layout);
  }

  bool scan_items(list_layout& layout) {
    layout.items_begin = at_;
    if (!take('['))
      return false;
    if (!take(']')) {
      for (;;) {
        skip_space();
        const std::size_t begin = at_;
        if (!skip_value())
          return false;
        layout.items.push_back(text_.substr(begin, at_ - begin));
        if (take(','))
          continue;
        if (take(']'))
          break;
        return false;
      }
    }
    layout.items_end = at_;
    return true;
  }

  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t'))
      ++at_;
  }

  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  // From an opening quote to past the closing one; escapes are skipped whole.
  bool skip_string() {
    if (at_ >= text_.size() || text_[at_] != '"')
      return false;
    ++at_;
    for (;;) {
      const std::size_t quote = text_.find('"', at_);
      if (quote == std::string_view::npos)
        return false;
      // The quote is escaped when an odd number of backslashes precede it.
      std::size_t backslashes = 0;
      while (quote - backslashes > at_ && text_[quote - backslashes - 1] == '\\')
        ++backslashes;
      at_ = quote + 1;
      if (backslashes % 2 == 0)
        return true;
    }
  }

  // One value of any kind. Brackets are counted, not matched: a mismatch fails the parse of the
  // piece that contains it.
  bool skip_value() {
    if (at_ >= text_.size())
      return false;
    const char first = text_[at_];
    if (first == '"')
      return skip_string();
    if (first != '{' && first != '[') {
      const std::size_t begin = at_;
      while (at_ < text_.size() && text_[at_] != ',' && text_[at_] != '}' && text_[at_] != ']' &&
             text_[at_] != ' ' && text_[at_] != '\n' && text_[at_] != '\r' && text_[at_] != '\t')
        ++at_;
      return at_ != begin;
    }
    std::size_t depth = 0;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '"') {
        if (!skip_string())
          return false;
        continue;
      }
      ++at_;
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0)
          return true;
      }
    }
    return false;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

// What the items of a page need from its envelope: the kind and apiVersion they may lack.
struct item_type {
  std::string item_kind;
  std::string api_version;
};

// Reads kind and metadata of a parsed List (its items aside) into `page`.
result<item_type> read_list_head(const json::value& parsed, list_page& page) {
  const auto* root = parsed.if_object();
  if (!root)
    return make_error(errc::invalid_object,
                      std::string("a List must be a JSON object, found ") + kind_name(parsed));
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
  item_type type;
  std::string_view item_kind = *kind;
  if (item_kind.size() > 4 && item_kind.ends_with("List")) {
    item_kind.remove_suffix(4);
    type.item_kind = std::string(item_kind);
  }
  type.api_version = std::string(*api_version);
  return type;
}

error item_error(std::size_t index, const error& cause) {
  return make_error(cause.code, "List items[" + std::to_string(index) + "]: " + cause.message);
}

error item_not_an_object(std::size_t index, const json::value& item) {
  return make_error(errc::invalid_object, "List items[" + std::to_string(index) +
                                              "] must be an object, found " + kind_name(item));
}

// The fast path: the envelope (items emptied) is parsed on its own, then every item straight
// into the arena its object keeps. Any failure sends the caller to decode_whole_list, so errors
// read the same either way.
result<list_page> decode_list_in_place(std::string_view body, const list_layout& layout,
                                       const decode_options& options) {
  std::string envelope;
  envelope.reserve(body.size() - (layout.items_end - layout.items_begin) + 2);
  envelope.append(body.substr(0, layout.items_begin));
  envelope.append("[]");
  envelope.append(body.substr(layout.items_end));
  json::monotonic_resource envelope_arena(envelope.size() * 2 + 256);
  auto parsed = parse_into(envelope, envelope_arena, "List");
  if (!parsed)
    return std::move(parsed).err();
  list_page page;
  auto type = read_list_head(*parsed, page);
  if (!type)
    return std::move(type).err();

  page.items.reserve(layout.items.size());
  for (std::size_t i = 0; i < layout.items.size(); ++i) {
    auto arena = document_arena(layout.items[i].size());
    // Two levels less: the item sits inside the List object and its items array.
    auto item = parse_into(layout.items[i], *arena, "List item", max_json_depth - 2);
    if (!item)
      return std::move(item).err();
    auto* fields = item->if_object();
    if (!fields)
      return item_not_an_object(i, *item);
    fill_item_type(*fields, type->item_kind, type->api_version);
    auto obj = object::adopt(std::move(arena), std::move(*item), options.transform);
    if (!obj)
      return item_error(i, obj.err());
    page.items.push_back(std::move(*obj));
  }
  return page;
}

// The whole body parsed into one scratch tree, each item copied out of it.
result<list_page> decode_whole_list(std::string_view body, const decode_options& options) {
  json::monotonic_resource arena(body.size() + 1024);
  auto parsed = parse_into(body, arena, "List");
  if (!parsed)
    return std::move(parsed).err();
  list_page page;
  auto type = read_list_head(*parsed, page);
  if (!type)
    return std::move(type).err();
  auto& root = parsed->get_object();
  auto iit = root.find("items");
  if (iit == root.end() || iit->value().is_null())
    return page;
  auto* items = iit->value().if_array();
  if (!items)
    return make_error(errc::invalid_object,
                      std::string("List items must be an array, found ") + kind_name(iit->value()));
  page.items.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    auto& item = (*items)[i];
    auto* fields = item.if_object();
    if (!fields)
      return item_not_an_object(i, item);
    fill_item_type(*fields, type->item_kind, type->api_version);
    auto obj = freeze(item, options);
    if (!obj)
      return item_error(i, obj.err());
    page.items.push_back(std::move(*obj));
  }
  return page;
}

} // namespace

result<list_page> decode_list(std::string_view body, const decode_options& options) {
  if (auto layout = list_scanner(body).scan()) {
    if (auto page = decode_list_in_place(body, *layout, options))
      return page;
  }
  return decode_whole_list(body, options);
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
  // The event's object keeps this arena: parsed once, never copied.
  auto arena = document_arena(line.size());
  auto parsed = parse_into(line, *arena, "watch event");
  if (!parsed)
    return std::move(parsed).err();
  auto* root = parsed->if_object();
  if (!root)
    return make_error(errc::invalid_object,
                      std::string("a watch event must be a JSON object, found ") +
                          kind_name(*parsed));
  auto type_it = root->find("type");
  if (type_it == root->end() || !type_it->value().is_string())
    return make_error(errc::invalid_object, "a watch event needs a string 'type'");
  const std::string_view type_text = type_it->value().get_string();
  watch_event event;
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

  auto object_it = root->find("object");
  if (object_it == root->end() || !object_it->value().is_object())
    return make_error(errc::invalid_object,
                      "a watch event of type " + std::string(type_text) +
                          " needs an 'object' that is a JSON object, found " +
                          (object_it == root->end() ? "nothing" : kind_name(object_it->value())));
  if (event.type == event_type::error) {
    event.error = status_from(object_it->value().get_object());
    return event;
  }
  std::string type_name(type_text); // type_text lives in the arena, which the object takes
  json::value payload = std::move(object_it->value());
  *parsed = nullptr; // nothing but `payload` refers into the arena from here on
  auto obj = object::adopt(std::move(arena), std::move(payload), options.transform);
  if (!obj)
    return make_error(obj.err().code, type_name + " event object: " + obj.err().message);
  event.object = std::move(*obj);
  return event;
}

} // namespace kinformer
