#pragma once
// How kinformer-watch prints what its handler receives: the delta line (the default), or the
// object itself as `kubectl get -w -o json|yaml|name` prints it.

#include "actors/delta.hpp"
#include "protocol/result.hpp"

#include <ostream>
#include <string>
#include <string_view>

namespace kinformer {

enum class output_format { delta_line, json, yaml, name };

// "json", "yaml", "name"; "" is the delta line. Anything else is an error naming the choices.
result<output_format> parse_output_format(std::string_view text);

// What `-o name` prints before the object's name: "pod", "deployment.apps" (kubectl's form:
// the kind in lower case, then the API group when there is one).
std::string name_prefix(std::string_view kind, std::string_view group);

// Writes one delta in `format`. Outside the delta line, a sync (nothing changed) prints nothing,
// as kubectl prints only events; json is indented by 4 as kubectl's, yaml documents are
// separated by "---", name is "<prefix>/<name>".
void write_delta(std::ostream& out, const delta& d, output_format format,
                 std::string_view name_prefix);

} // namespace kinformer
