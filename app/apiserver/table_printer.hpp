#pragma once
// The API server's printer columns for the built-in kinds (k8s.io/kubernetes
// pkg/printers/internalversion/printers.go): what `kubectl get pods` shows as READY, STATUS,
// RESTARTS and AGE, and with -o wide the priority-1 columns (the server always sends every
// cell; kubectl hides what it does not show). Kinds without a printer get the default Table
// (Name, Created At).

#include "protocol/object.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace kinformer::apiserver {

struct table_printer {
  std::string columns; // the columnDefinitions array, as JSON
  // Appends the row's cells (a JSON array) for one full object; `now` is what ages count from.
  void (*cells)(const object& obj, std::chrono::system_clock::time_point now, std::string& out);
};

// The printer for a kind of the core or apps group ("" / "apps"), or null.
const table_printer* printer_for(std::string_view group, std::string_view kind);

// The API server's age of a timestamp (k8s.io/apimachinery duration.HumanDuration): "45s",
// "3m20s", "2d5h", ...; "<unknown>" for none and "<invalid>" for one in the future.
std::string human_age(std::string_view rfc3339, std::chrono::system_clock::time_point now);

} // namespace kinformer::apiserver
