#include "app/common/object_output.hpp"

#include "app/common/delta_line.hpp"
#include "protocol/object.hpp"

#include <boost/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace kinformer {

namespace {

void write_indent(std::ostream& out, int depth) {
  for (int i = 0; i < depth * 4; ++i)
    out.put(' ');
}

// Boost.JSON has no indented form: written here, members in the order received.
void write_indented_json(std::ostream& out, const boost::json::value& v, int depth) {
  if (const auto* o = v.if_object(); o && !o->empty()) {
    out << "{\n";
    bool first = true;
    for (const auto& member : *o) {
      out << (first ? "" : ",\n");
      first = false;
      write_indent(out, depth + 1);
      out << boost::json::serialize(boost::json::value(member.key())) << ": ";
      write_indented_json(out, member.value(), depth + 1);
    }
    out << "\n";
    write_indent(out, depth);
    out << "}";
    return;
  }
  if (const auto* a = v.if_array(); a && !a->empty()) {
    out << "[\n";
    bool first = true;
    for (const auto& element : *a) {
      out << (first ? "" : ",\n");
      first = false;
      write_indent(out, depth + 1);
      write_indented_json(out, element, depth + 1);
    }
    out << "\n";
    write_indent(out, depth);
    out << "]";
    return;
  }
  out << boost::json::serialize(v);
}

// A string YAML would read back as something else (a bool, null, a number) or as nothing.
bool needs_quotes(std::string_view s) {
  if (s.empty())
    return true;
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view word : {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"})
    if (lower == word)
      return true;
  char* end = nullptr;
  const std::string text(s);
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

void emit_yaml(YAML::Emitter& out, const boost::json::value& v) {
  switch (v.kind()) {
  case boost::json::kind::object:
    out << YAML::BeginMap;
    for (const auto& member : v.get_object()) {
      out << YAML::Key << std::string(member.key()) << YAML::Value;
      emit_yaml(out, member.value());
    }
    out << YAML::EndMap;
    return;
  case boost::json::kind::array:
    out << YAML::BeginSeq;
    for (const auto& element : v.get_array())
      emit_yaml(out, element);
    out << YAML::EndSeq;
    return;
  case boost::json::kind::string: {
    const std::string s(v.get_string());
    if (needs_quotes(s))
      out << YAML::DoubleQuoted << s;
    else
      out << s;
    return;
  }
  case boost::json::kind::null:
    out << YAML::Null;
    return;
  default: // numbers and booleans: their JSON text is their YAML text
    out << boost::json::serialize(v);
    return;
  }
}

} // namespace

result<output_format> parse_output_format(std::string_view text) {
  if (text.empty())
    return output_format::delta_line;
  if (text == "json")
    return output_format::json;
  if (text == "yaml")
    return output_format::yaml;
  if (text == "name")
    return output_format::name;
  return make_error(errc::invalid_argument,
                    "-o/--output: \"" + std::string(text) + "\" is not one of json, yaml, name");
}

std::string name_prefix(std::string_view kind, std::string_view group) {
  std::string out(kind);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!group.empty())
    out.append(".").append(group);
  return out;
}

void write_delta(std::ostream& out, const delta& d, output_format format, std::string_view prefix) {
  if (format == output_format::delta_line) {
    out << delta_line(d) << '\n';
    return;
  }
  if (d.type == delta_type::sync)
    return;
  switch (format) {
  case output_format::json:
    write_indented_json(out, d.object->tree(), 0);
    out << '\n';
    return;
  case output_format::yaml: {
    YAML::Emitter emitter;
    emit_yaml(emitter, d.object->tree());
    out << "---\n" << emitter.c_str() << '\n';
    return;
  }
  case output_format::name:
    out << prefix << '/' << d.object->meta().name << '\n';
    return;
  case output_format::delta_line:
    return;
  }
}

} // namespace kinformer
