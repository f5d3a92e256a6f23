#include "app/apiserver/response_form.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <vector>

namespace kinformer::apiserver {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

struct media_range {
  std::string_view type;
  std::string_view as, group, version;
  double q = 1.0;
};

media_range parse_range(std::string_view text) {
  media_range range;
  auto semicolon = text.find(';');
  range.type = trim(text.substr(0, semicolon));
  while (semicolon != std::string_view::npos) {
    text.remove_prefix(semicolon + 1);
    semicolon = text.find(';');
    auto param = trim(text.substr(0, semicolon));
    auto equals = param.find('=');
    if (equals == std::string_view::npos)
      continue;
    auto name = trim(param.substr(0, equals));
    auto value = trim(param.substr(equals + 1));
    if (iequals(name, "as"))
      range.as = value;
    else if (iequals(name, "g"))
      range.group = value;
    else if (iequals(name, "v"))
      range.version = value;
    else if (iequals(name, "q")) {
      double q = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), q);
      range.q = ec == std::errc() && end == value.data() + value.size() ? q : 0;
    }
  }
  return range;
}

std::optional<response_shape> shape_of(const media_range& range, request_verb verb) {
  if (!iequals(range.type, "application/json") && !iequals(range.type, "application/*") &&
      range.type != "*/*")
    return std::nullopt;
  if (range.as.empty())
    return response_shape::object;
  if (range.group != "meta.k8s.io" || (range.version != "v1" && range.version != "v1beta1"))
    return std::nullopt;
  if (range.as == "Table")
    return response_shape::table;
  const bool list = verb == request_verb::list;
  if (range.as == (list ? "PartialObjectMetadataList" : "PartialObjectMetadata"))
    return response_shape::partial_metadata;
  return std::nullopt;
}

} // namespace

std::optional<response_shape> negotiate_shape(std::string_view accept, request_verb verb,
                                              bool tables) {
  if (trim(accept).empty())
    return response_shape::object;
  std::vector<media_range> ranges;
  for (std::size_t start = 0; start <= accept.size();) {
    auto comma = accept.find(',', start);
    auto part =
        trim(accept.substr(start, comma == std::string_view::npos ? accept.npos : comma - start));
    if (!part.empty())
      ranges.push_back(parse_range(part));
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const media_range& a, const media_range& b) { return a.q > b.q; });
  for (const auto& range : ranges)
    if (range.q > 0)
      if (auto shape = shape_of(range, verb); shape && (tables || shape != response_shape::table))
        return shape;
  return std::nullopt;
}

} // namespace kinformer::apiserver
