#include "tests/bench/parse_ceiling.hpp"

#include <boost/json.hpp>

#include <chrono>

namespace kinformer::bench {

namespace {

parse_ceiling parse_once(const json_documents& documents) {
  parse_ceiling out;
  auto started = std::chrono::steady_clock::now();
  for (const auto& document : documents) {
    boost::json::monotonic_resource arena;
    boost::system::error_code ec;
    auto value = boost::json::parse(*document, ec, &arena);
    if (ec || !value.is_object()) {
      ++out.failures;
      continue;
    }
    out.bytes += document->size();
    ++out.documents;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

} // namespace

parse_ceiling measure_parse_ceiling(const json_documents& documents, int passes) {
  parse_ceiling best;
  for (int pass = 0; pass < passes; ++pass) {
    auto timed = parse_once(documents);
    if (pass == 0 || timed.seconds < best.seconds)
      best = timed;
  }
  best.passes = passes;
  return best;
}

} // namespace kinformer::bench
