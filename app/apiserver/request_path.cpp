#include "app/apiserver/request_path.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kinformer::apiserver {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// [resource, name?, subresource?] into `out`; false when there are too many segments.
bool take_resource(const std::vector<std::string>& rest, std::size_t from, resource_path& out) {
  std::size_t n = rest.size() - from;
  if (n == 0 || n > 3)
    return false;
  out.resource = rest[from];
  if (n >= 2)
    out.name = rest[from + 1];
  if (n == 3)
    out.subresource = rest[from + 2];
  return true;
}

bool parse_resource(const std::vector<std::string>& segs, std::size_t from, resource_path& out) {
  if (from < segs.size() && segs[from] == "watch") {
    out.watch_prefix = true;
    ++from;
  }
  std::size_t n = segs.size() - from;
  bool namespaced_path = n >= 3 && segs[from] == "namespaces" && segs[from + 2] != "status" &&
                         segs[from + 2] != "finalize";
  if (!namespaced_path)
    return take_resource(segs, from, out);
  out.namespace_ = segs[from + 1];
  return take_resource(segs, from + 2, out);
}

} // namespace

std::optional<std::string_view> request_target::param(std::string_view name) const {
  auto it = query.find(std::string(name));
  if (it == query.end())
    return std::nullopt;
  return std::string_view(it->second);
}

result<bool> request_target::flag(std::string_view name) const {
  auto value = param(name);
  if (!value)
    return false;
  auto v = lower(*value);
  if (v == "1" || v == "true")
    return true;
  if (v.empty() || v == "0" || v == "false")
    return false;
  return make_error(errc::invalid_argument,
                    "invalid value for " + std::string(name) + ": \"" + std::string(*value) + "\"");
}

result<std::optional<std::int64_t>> request_target::integer(std::string_view name) const {
  auto value = param(name);
  if (!value || value->empty())
    return std::optional<std::int64_t>{};
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (ec != std::errc() || end != value->data() + value->size() || n < 0)
    return make_error(errc::invalid_argument, "invalid value for " + std::string(name) + ": \"" +
                                                  std::string(*value) +
                                                  "\": must be a non-negative integer");
  return std::optional<std::int64_t>{n};
}

result<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      int hi = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
      int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return make_error(errc::invalid_argument,
                          "malformed percent escape at offset " + std::to_string(i));
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

result<request_target> parse_target(std::string_view target) {
  if (target.empty() || target.front() != '/')
    return make_error(errc::invalid_argument,
                      "request target must be an absolute path: \"" + std::string(target) + "\"");
  request_target out;
  auto qmark = target.find('?');
  auto raw_path = target.substr(0, qmark);
  // Segments are split before decoding so an escaped '/' stays inside its segment.
  std::size_t start = 0;
  while (start <= raw_path.size()) {
    auto slash = raw_path.find('/', start);
    auto end = slash == std::string_view::npos ? raw_path.size() : slash;
    if (end > start) {
      auto segment = percent_decode(raw_path.substr(start, end - start), false);
      if (!segment)
        return std::move(segment).err();
      out.segments.push_back(std::move(*segment));
    }
    start = end + 1;
  }
  auto path = percent_decode(raw_path, false);
  if (!path)
    return std::move(path).err();
  out.path = std::move(*path);

  if (qmark == std::string_view::npos)
    return out;
  auto query = target.substr(qmark + 1);
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty())
      continue;
    auto eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    if (!key)
      return std::move(key).err();
    auto value = percent_decode(
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
    if (!value)
      return std::move(value).err();
    // The first occurrence wins, as Go's url.Values.Get does.
    out.query.emplace(std::move(*key), std::move(*value));
  }
  return out;
}

route classify(const std::vector<std::string>& segs) {
  route r;
  if (segs.empty())
    return r;
  const std::string& root = segs[0];
  if (root == "version" && segs.size() == 1) {
    r.kind = route_kind::version;
  } else if (root == "healthz" || root == "livez" || root == "readyz") {
    r.kind = route_kind::health;
  } else if (root == "openapi") {
    r.kind = route_kind::openapi;
  } else if (root == "sim") {
    r.kind = route_kind::control;
  } else if (root == "api") {
    if (segs.size() == 1) {
      r.kind = route_kind::core_versions;
    } else if (segs.size() == 2) {
      r.kind = route_kind::resource_list;
      r.version = segs[1];
    } else {
      r.resource.version = segs[1];
      if (parse_resource(segs, 2, r.resource))
        r.kind = route_kind::resource;
    }
  } else if (root == "apis") {
    if (segs.size() == 1) {
      r.kind = route_kind::group_list;
    } else if (segs.size() == 2) {
      r.kind = route_kind::group;
      r.group = segs[1];
    } else if (segs.size() == 3) {
      r.kind = route_kind::resource_list;
      r.group = segs[1];
      r.version = segs[2];
    } else {
      r.resource.group = segs[1];
      r.resource.version = segs[2];
      if (parse_resource(segs, 3, r.resource))
        r.kind = route_kind::resource;
    }
  }
  return r;
}

} // namespace kinformer::apiserver
