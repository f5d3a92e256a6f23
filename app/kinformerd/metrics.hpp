#pragma once
// kinformerd's Prometheus metrics: one registry (prometheus-cpp core) fed from the cache's stats
// and rendered as the text exposition format for the HTTP server's /metrics route.
//
// The informers keep cumulative counts and histograms (actors/messages.hpp informer_stats);
// update() turns them into Prometheus counters and histograms by adding what grew since the
// previous update, so exported series never go down. A restarted informer counts from zero
// again: it is recognised by the cache's restart count for it, or by a count that went down,
// and then its new values are added whole. Series of informers and subscriptions that are gone
// are removed, so a scrape shows only what runs.
//
// Thread-safe: update() and count_api_request() may run on any thread, concurrently with
// render().

#include "actors/cache_messages.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace prometheus {
class Registry;
} // namespace prometheus

namespace kinformer {

struct webhook_stats;
namespace service {
struct read_api_stats;
} // namespace service
namespace apiserver {
struct http_server_stats;
} // namespace apiserver

class service_metrics {
public:
  service_metrics();
  ~service_metrics();
  service_metrics(const service_metrics&) = delete;
  service_metrics& operator=(const service_metrics&) = delete;

  // Per informer (labels kind, namespace) and per subscription (plus label subscription).
  // `now` is the clock the informers' last_event timestamps come from.
  void update(const cache_stats& stats,
              std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // A webhook handler's counters (label handler).
  void update(std::string_view handler, const webhook_stats& stats);

  // One request the API client finished (see protocol/http/api_client.hpp request_record):
  // counted by verb and HTTP code (0: no response), and its duration, when known, observed by
  // verb.
  void count_api_request(std::string_view verb, int code,
                         std::optional<std::chrono::duration<double>> duration = std::nullopt);

  // The read API's requests by verb and code and its open watches, and its HTTP server's bytes
  // written, clients dropped for reading too slowly and connections refused past the bound.
  void update(const service::read_api_stats& api, const apiserver::http_server_stats& server);

  // Leader election: whether this replica holds `lease` ("namespace/name").
  void set_leading(std::string_view lease, bool leading);

  // The text exposition format (version 0.0.4), process metrics included.
  std::string render() const;

  // For adding metrics of other components to the same scrape.
  prometheus::Registry& registry();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kinformer
