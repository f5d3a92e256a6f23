#pragma once
// The limit the informer is compared against: the same JSON bytes parsed by Boost.JSON alone,
// each document into its own monotonic_resource (the fastest way Boost.JSON builds a tree, see
// design §6). Any client that parses what it receives cannot ingest faster than this.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace kinformer::bench {

using json_documents = std::vector<std::shared_ptr<const std::string>>;

struct parse_ceiling {
  std::size_t documents = 0;
  std::size_t bytes = 0;
  std::size_t failures = 0; // documents that were not valid JSON (expected: none)
  double seconds = 0;       // of the fastest pass
  int passes = 0;

  double megabytes_per_second() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
};

// Parses every document `passes` times and reports the fastest pass: the limit is what Boost.JSON
// can do, and the best pass is the one least disturbed by other work on the machine.
parse_ceiling measure_parse_ceiling(const json_documents& documents, int passes = 3);

} // namespace kinformer::bench
