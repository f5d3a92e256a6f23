// service_metrics and the probes: values from a cache_stats built here, rendered as the Prometheus
// text format and parsed back.

#include "app/apiserver/http_server.hpp"
#include "app/common/heap_trimmer.hpp"
#include "app/kinformerd/health.hpp"
#include "app/kinformerd/metrics.hpp"
#include "app/kinformerd/process_metrics.hpp"
#include "app/kinformerd/read_api.hpp"
#include "app/kinformerd/webhook_handler.hpp"

#include "tests/support/sanitizers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

using namespace kinformer;
using namespace std::chrono_literals;

namespace {

// One scrape, parsed: series (see key()) -> value, and each family's TYPE.
struct scrape {
  std::map<std::string, double> values;
  std::map<std::string, std::string> types;

  bool has(const std::string& series) const { return values.count(series) > 0; }
  double at(const std::string& series) const {
    auto it = values.find(series);
    if (it == values.end())
      FAIL("no series " << series);
    return it->second;
  }
};

// A series key: "name{a=\"x\",b=\"y\"}", labels sorted by name (as parse() stores them).
std::string key(const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  std::string out = name;
  if (labels.empty())
    return out;
  out += '{';
  bool first = true;
  for (auto& [k, v] : labels) {
    out += (first ? "" : ",") + k + "=\"" + v + "\"";
    first = false;
  }
  return out + '}';
}

// Parses the text exposition format strictly enough to catch malformed output.
scrape parse(const std::string& text) {
  scrape out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty())
      continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      out.types[name] = type;
      continue;
    }
    if (line[0] == '#')
      continue;
    auto brace = line.find('{');
    auto space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    std::string name = line.substr(0, std::min(brace, space));
    std::map<std::string, std::string> labels;
    if (brace != std::string::npos && brace < space) {
      auto close = line.rfind('}', space);
      REQUIRE(close != std::string::npos);
      std::string body = line.substr(brace + 1, close - brace - 1);
      std::size_t pos = 0;
      while (pos < body.size()) {
        auto eq = body.find('=', pos);
        REQUIRE(eq != std::string::npos);
        REQUIRE(body[eq + 1] == '"');
        auto end = body.find('"', eq + 2);
        REQUIRE(end != std::string::npos);
        labels[body.substr(pos, eq - pos)] = body.substr(eq + 2, end - eq - 2);
        pos = end + 1;
        if (pos < body.size() && body[pos] == ',')
          ++pos;
      }
    }
    auto value_text = line.substr(space + 1);
    out.values[key(name, labels)] =
        value_text == "Nan" || value_text == "NaN" ? std::nan("") : std::stod(value_text);
  }
  return out;
}

const std::map<std::string, std::string> cm_default{{"kind", "v1, Kind=ConfigMap"},
                                                    {"namespace", "default"}};
const std::map<std::string, std::string> pods_all{{"kind", "v1, Kind=Pod"}, {"namespace", ""}};

std::map<std::string, std::string> with(std::map<std::string, std::string> labels,
                                        const std::string& name, const std::string& value) {
  labels[name] = value;
  return labels;
}

const auto t0 = std::chrono::steady_clock::time_point{} + 1000h;

histogram observed(std::vector<double> bounds, std::initializer_list<double> values) {
  histogram h(std::move(bounds));
  for (double v : values)
    h.observe(v);
  return h;
}

subscription_stats queue(subscription_id id, std::string name, std::size_t depth,
                         std::uint64_t delivered, std::initializer_list<double> lags) {
  subscription_stats q;
  q.id = id;
  q.name = std::move(name);
  q.depth = depth;
  q.high_water = depth * 10;
  q.delivered = delivered;
  q.coalesced = 8;
  q.over_bound = 2;
  q.synced = true;
  q.delivery_lag = observed(delivery_lag_bounds(), lags);
  return q;
}

cache_informer_stats config_maps(std::string ns) {
  cache_informer_stats info;
  info.kind = "v1, Kind=ConfigMap";
  info.namespace_ = std::move(ns);
  info.restarts = 1;
  info.restart_delay = std::chrono::milliseconds(250);
  auto& s = info.stats;
  s.synced = true;
  s.objects = 42;
  s.resource_version = "1234";
  s.events_added = 10;
  s.events_modified = 7;
  s.events_deleted = 3;
  s.bookmarks = 2;
  s.lists = 3;
  s.relists = 2;
  s.relists_by_reason = {{"watch_expired", 1}, {"resource_version_too_large", 1}};
  s.watch_restarts = 5;
  s.watch_starts_by_reason = {{"list_complete", 3}, {"watch_ended", 2}, {"stalled", 1}};
  s.retries = 4;
  // Three lists: 0.3 s, 3 s and one past the largest bound.
  s.list_seconds = observed(list_duration_bounds(), {0.3, 3, 90});
  s.subscriptions = 2;
  s.last_event = t0 - 3s;
  s.queues.push_back(queue(1, "log", 6, 100, {0.002, 0.0003}));
  s.queues.push_back(queue(2, "", 0, 50, {}));
  s.queues.back().synced = false;
  return info;
}

const std::string list_duration = "kinformer_informer_list_duration_seconds";
const std::string delivery_lag = "kinformer_handler_delivery_lag_seconds";

} // namespace

TEST_CASE("informer and subscription series carry the values of cache_stats") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  auto pods = config_maps("");
  pods.kind = "v1, Kind=Pod";
  pods.stats.synced = false;
  pods.stats.last_event = {};
  pods.stats.queues.clear();
  stats.informers.push_back(pods);
  metrics.update(stats, t0);

  auto s = parse(metrics.render());
  CHECK(s.at(key("kinformer_informer_objects", cm_default)) == 42);
  CHECK(s.at(key("kinformer_informer_synced", cm_default)) == 1);
  CHECK(s.at(key("kinformer_informer_synced", pods_all)) == 0);
  const auto events = "kinformer_informer_events_total";
  CHECK(s.at(key(events, with(cm_default, "type", "ADDED"))) == 10);
  CHECK(s.at(key(events, with(cm_default, "type", "MODIFIED"))) == 7);
  CHECK(s.at(key(events, with(cm_default, "type", "DELETED"))) == 3);
  CHECK(s.at(key(events, with(cm_default, "type", "BOOKMARK"))) == 2);
  CHECK(s.at(key("kinformer_informer_lists_total", cm_default)) == 3);
  CHECK(s.at(key("kinformer_informer_retries_total", cm_default)) == 4);
  CHECK(s.at(key("kinformer_informer_restarts_total", cm_default)) == 1);
  CHECK(s.at(key("kinformer_informer_restart_backoff_seconds", cm_default)) == 0.25);
  CHECK(s.at(key("kinformer_informer_restart_pending", cm_default)) == 0);
  CHECK(s.at(key("kinformer_informer_subscriptions", cm_default)) == 2);
  CHECK(s.at(key("kinformer_informer_last_resource_version_age_seconds", cm_default)) ==
        Approx(3.0));
  // No event yet: the age is unknown, not zero.
  CHECK(std::isnan(s.at(key("kinformer_informer_last_resource_version_age_seconds", pods_all))));

  const auto sub = with(cm_default, "subscription", "log");
  CHECK(s.at(key("kinformer_handler_queue_depth", sub)) == 6);
  CHECK(s.at(key("kinformer_handler_queue_high_water", sub)) == 60);
  CHECK(s.at(key("kinformer_handler_delivered_total", sub)) == 100);
  CHECK(s.at(key("kinformer_handler_coalesced_total", sub)) == 8);
  CHECK(s.at(key("kinformer_handler_overflowed_total", sub)) == 2);
  CHECK(s.at(key("kinformer_handler_synced", sub)) == 1);
  // An unnamed subscription is named by its id.
  const auto unnamed = with(cm_default, "subscription", "#2");
  CHECK(s.at(key("kinformer_handler_delivered_total", unnamed)) == 50);
  CHECK(s.at(key("kinformer_handler_synced", unnamed)) == 0);
}

TEST_CASE("relists and watch starts are counted by reason") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  metrics.update(stats, t0);
  auto s = parse(metrics.render());
  const auto relists = "kinformer_informer_relists_total";
  const auto watches = "kinformer_informer_watch_starts_total";
  CHECK(s.at(key(relists, with(cm_default, "reason", "watch_expired"))) == 1);
  CHECK(s.at(key(relists, with(cm_default, "reason", "resource_version_too_large"))) == 1);
  CHECK(s.at(key(watches, with(cm_default, "reason", "list_complete"))) == 3);
  CHECK(s.at(key(watches, with(cm_default, "reason", "watch_ended"))) == 2);
  CHECK(s.at(key(watches, with(cm_default, "reason", "stalled"))) == 1);
  // Only reasons that happened, and no placeholder reason.
  CHECK_FALSE(s.has(key(relists, with(cm_default, "reason", "throttled"))));
  CHECK_FALSE(s.has(key(relists, with(cm_default, "reason", "unknown"))));

  // A new reason appears, an old one grows.
  auto& info = stats.informers[0].stats;
  info.relists_by_reason["watch_expired"] = 4;
  info.relists_by_reason["list_expired"] = 1;
  metrics.update(stats, t0);
  s = parse(metrics.render());
  CHECK(s.at(key(relists, with(cm_default, "reason", "watch_expired"))) == 4);
  CHECK(s.at(key(relists, with(cm_default, "reason", "list_expired"))) == 1);
  CHECK(s.at(key(relists, with(cm_default, "reason", "resource_version_too_large"))) == 1);
}

TEST_CASE("list durations and delivery lags are histograms built from the cumulative buckets") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  metrics.update(stats, t0);
  auto s = parse(metrics.render());
  CHECK(s.types.at(list_duration) == "histogram");
  CHECK(s.at(key(list_duration + "_count", cm_default)) == 3);
  CHECK(s.at(key(list_duration + "_sum", cm_default)) == Approx(93.3));
  // Prometheus buckets are cumulative: le="0.5" holds the 0.3 s list, le="5" the 3 s one too.
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "0.25"))) == 0);
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "0.5"))) == 1);
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "5"))) == 2);
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "60"))) == 2);
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "+Inf"))) == 3);

  const auto log = with(cm_default, "subscription", "log");
  CHECK(s.types.at(delivery_lag) == "histogram");
  CHECK(s.at(key(delivery_lag + "_count", log)) == 2);
  CHECK(s.at(key(delivery_lag + "_sum", log)) == Approx(0.0023));
  CHECK(s.at(key(delivery_lag + "_bucket", with(log, "le", "0.0001"))) == 0);
  CHECK(s.at(key(delivery_lag + "_bucket", with(log, "le", "0.0005"))) == 1);
  CHECK(s.at(key(delivery_lag + "_bucket", with(log, "le", "0.001"))) == 1);
  CHECK(s.at(key(delivery_lag + "_bucket", with(log, "le", "0.005"))) == 2);
  CHECK(s.at(key(delivery_lag + "_bucket", with(log, "le", "+Inf"))) == 2);
  // A subscription with no acknowledged batch yet has an empty histogram, not none.
  CHECK(s.at(key(delivery_lag + "_count", with(cm_default, "subscription", "#2"))) == 0);

  // Two more lists; the same snapshot again adds nothing.
  auto& info = stats.informers[0].stats;
  info.list_seconds.observe(0.02);
  info.list_seconds.observe(0.4);
  metrics.update(stats, t0);
  metrics.update(stats, t0);
  s = parse(metrics.render());
  CHECK(s.at(key(list_duration + "_count", cm_default)) == 5);
  CHECK(s.at(key(list_duration + "_sum", cm_default)) == Approx(93.72));
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "0.05"))) == 1);
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "0.5"))) == 3);
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "+Inf"))) == 5);
}

TEST_CASE("names follow the Prometheus conventions and types match") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  metrics.update(stats, t0);
  metrics.count_api_request("LIST", 200, 120ms);
  auto s = parse(metrics.render());
  REQUIRE(!s.types.empty());
  for (auto& [name, type] : s.types) {
    INFO(name);
    CHECK((name.rfind("kinformer_", 0) == 0 || name.rfind("process_", 0) == 0));
    bool total = name.size() > 6 && name.substr(name.size() - 6) == "_total";
    CHECK(total == (type == "counter"));
    bool seconds = name.size() > 8 && name.substr(name.size() - 8) == "_seconds";
    if (type == "histogram")
      CHECK(seconds);
    CHECK((type == "counter" || type == "gauge" || type == "histogram"));
  }
  CHECK(s.types.at("kinformer_api_request_duration_seconds") == "histogram");
}

TEST_CASE("counters follow the informers' cumulative counts, across informer restarts") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  const auto added = key("kinformer_informer_events_total", with(cm_default, "type", "ADDED"));
  metrics.update(stats, t0);
  CHECK(parse(metrics.render()).at(added) == 10);
  stats.informers[0].stats.events_added = 15;
  metrics.update(stats, t0);
  CHECK(parse(metrics.render()).at(added) == 15);
  // The same update twice adds nothing.
  metrics.update(stats, t0);
  CHECK(parse(metrics.render()).at(added) == 15);
  // A restarted informer counts from zero again: its 4 come on top, the counter never goes down.
  stats.informers[0].stats.events_added = 4;
  metrics.update(stats, t0);
  CHECK(parse(metrics.render()).at(added) == 19);
}

TEST_CASE("listed items handed on as the objects stored are counted per informer") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  stats.informers[0].stats.list_items_reused = 40;
  metrics.update(stats, t0);
  CHECK(parse(metrics.render()).at(key("kinformer_informer_list_items_reused_total", cm_default)) ==
        40);
}

TEST_CASE("after the cache restarts an informer, all its new counts are added whole") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  metrics.update(stats, t0);

  // The replacement has already counted past the old values before this update: without the
  // cache's restart count these would look like small increments.
  auto& info = stats.informers[0];
  info.restarts = 2;
  info.stats.events_added = 12;
  info.stats.relists_by_reason = {{"watch_expired", 2}};
  info.stats.watch_starts_by_reason = {{"list_complete", 4}};
  info.stats.list_seconds = observed(list_duration_bounds(), {0.3, 3, 90, 0.02});
  info.stats.queues[0] = queue(1, "log", 0, 130, {0.002, 0.0003, 0.002});
  metrics.update(stats, t0);
  auto s = parse(metrics.render());
  CHECK(s.at(key("kinformer_informer_events_total", with(cm_default, "type", "ADDED"))) == 22);
  CHECK(s.at(key("kinformer_informer_relists_total",
                 with(cm_default, "reason", "watch_expired"))) == 3);
  CHECK(s.at(key("kinformer_informer_watch_starts_total",
                 with(cm_default, "reason", "list_complete"))) == 7);
  // Reasons the new informer has not seen yet keep what they had.
  CHECK(s.at(key("kinformer_informer_watch_starts_total",
                 with(cm_default, "reason", "watch_ended"))) == 2);
  CHECK(s.at(key("kinformer_informer_restarts_total", cm_default)) == 2);
  CHECK(s.at(key(list_duration + "_count", cm_default)) == 7);
  CHECK(s.at(key(list_duration + "_sum", cm_default)) == Approx(93.3 * 2 + 0.02));
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "0.05"))) == 1);
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "+Inf"))) == 7);
  // The subscriptions live in the informer: they restarted too.
  const auto log = with(cm_default, "subscription", "log");
  CHECK(s.at(key("kinformer_handler_delivered_total", log)) == 230);
  CHECK(s.at(key(delivery_lag + "_count", log)) == 5);

  // From then on, increments again.
  info.stats.events_added = 13;
  metrics.update(stats, t0);
  CHECK(parse(metrics.render())
            .at(key("kinformer_informer_events_total", with(cm_default, "type", "ADDED"))) == 23);
}

TEST_CASE("a histogram that went down belongs to a restarted informer and is added whole") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  metrics.update(stats, t0);
  // The cache's answer for an informer that failed just now: empty stats, same restart count.
  stats.informers[0].stats = informer_stats{};
  metrics.update(stats, t0);
  auto s = parse(metrics.render());
  CHECK(s.at(key(list_duration + "_count", cm_default)) == 3);
  // Its replacement's first list.
  stats.informers[0].stats.list_seconds.observe(0.3);
  metrics.update(stats, t0);
  s = parse(metrics.render());
  CHECK(s.at(key(list_duration + "_count", cm_default)) == 4);
  CHECK(s.at(key(list_duration + "_sum", cm_default)) == Approx(93.6));
  CHECK(s.at(key(list_duration + "_bucket", with(cm_default, "le", "0.5"))) == 2);
}

TEST_CASE("malformed histograms are skipped, not thrown on") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  auto& info = stats.informers[0].stats;
  // Too few counts for the bounds, and bounds out of order.
  info.list_seconds.counts.pop_back();
  info.queues[0].delivery_lag = histogram({0.5, 0.1});
  info.queues[1].delivery_lag.bounds[0] = std::nan("");
  REQUIRE_NOTHROW(metrics.update(stats, t0));
  auto s = parse(metrics.render());
  CHECK_FALSE(s.has(key(list_duration + "_count", cm_default)));
  CHECK_FALSE(s.has(key(delivery_lag + "_count", with(cm_default, "subscription", "log"))));
  CHECK_FALSE(s.has(key(delivery_lag + "_count", with(cm_default, "subscription", "#2"))));
  CHECK(s.at(key("kinformer_informer_objects", cm_default)) == 42);

  // Well formed again: the series starts; later snapshots with other bounds are ignored.
  stats.informers[0] = config_maps("default");
  metrics.update(stats, t0);
  stats.informers[0].stats.list_seconds = observed({1, 2}, {0.5, 0.5, 0.5, 0.5});
  REQUIRE_NOTHROW(metrics.update(stats, t0));
  s = parse(metrics.render());
  CHECK(s.at(key(list_duration + "_count", cm_default)) == 3);
}

TEST_CASE("series of informers and subscriptions that are gone are removed") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  stats.informers.push_back(config_maps("kube-system"));
  metrics.update(stats, t0);
  const auto kube_system = with(cm_default, "namespace", "kube-system");
  const auto log = with(cm_default, "subscription", "log");
  auto before = parse(metrics.render());
  CHECK(before.has(key("kinformer_informer_objects", kube_system)));
  CHECK(before.has(key(list_duration + "_count", kube_system)));
  CHECK(before.has(key("kinformer_handler_queue_depth", log)));
  CHECK(before.has(key(delivery_lag + "_count", log)));

  stats.informers.pop_back();
  stats.informers[0].stats.queues.erase(stats.informers[0].stats.queues.begin());
  metrics.update(stats, t0);
  auto after = parse(metrics.render());
  CHECK_FALSE(after.has(key("kinformer_informer_objects", kube_system)));
  CHECK_FALSE(
      after.has(key("kinformer_informer_events_total", with(kube_system, "type", "ADDED"))));
  CHECK_FALSE(after.has(
      key("kinformer_informer_relists_total", with(kube_system, "reason", "watch_expired"))));
  CHECK_FALSE(after.has(key("kinformer_informer_restarts_total", kube_system)));
  CHECK_FALSE(after.has(key(list_duration + "_count", kube_system)));
  CHECK_FALSE(after.has(key(delivery_lag + "_count", with(kube_system, "subscription", "log"))));
  CHECK_FALSE(after.has(key("kinformer_handler_queue_depth", log)));
  CHECK_FALSE(after.has(key(delivery_lag + "_count", log)));
  CHECK(after.has(key("kinformer_handler_queue_depth", with(cm_default, "subscription", "#2"))));
  CHECK(after.at(key("kinformer_informer_objects", cm_default)) == 42);
  CHECK(after.at(key(list_duration + "_count", cm_default)) == 3);
}

TEST_CASE("two subscriptions of the same name stay apart") {
  service_metrics metrics;
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  stats.informers[0].stats.queues[1].name = "log";
  metrics.update(stats, t0);
  auto s = parse(metrics.render());
  CHECK(s.at(key("kinformer_handler_delivered_total", with(cm_default, "subscription", "log"))) ==
        100);
  CHECK(s.at(key("kinformer_handler_delivered_total", with(cm_default, "subscription", "log#2"))) ==
        50);
}

TEST_CASE("API requests are counted by verb and code, their durations observed by verb") {
  service_metrics metrics;
  metrics.count_api_request("list", 200, 300ms);
  metrics.count_api_request("list", 200, 3s);
  metrics.count_api_request("watch", 410, 20ms);
  metrics.count_api_request("watch", 0); // no duration known
  auto s = parse(metrics.render());
  const auto requests = "kinformer_api_requests_total";
  CHECK(s.at(key(requests, {{"code", "200"}, {"verb", "list"}})) == 2);
  CHECK(s.at(key(requests, {{"code", "410"}, {"verb", "watch"}})) == 1);
  CHECK(s.at(key(requests, {{"code", "0"}, {"verb", "watch"}})) == 1);
  const std::string duration = "kinformer_api_request_duration_seconds";
  CHECK(s.at(key(duration + "_count", {{"verb", "list"}})) == 2);
  CHECK(s.at(key(duration + "_sum", {{"verb", "list"}})) == Approx(3.3));
  CHECK(s.at(key(duration + "_bucket", {{"le", "0.5"}, {"verb", "list"}})) == 1);
  CHECK(s.at(key(duration + "_bucket", {{"le", "4"}, {"verb", "list"}})) == 2);
  CHECK(s.at(key(duration + "_count", {{"verb", "watch"}})) == 1);
  CHECK(s.at(key(duration + "_bucket", {{"le", "0.025"}, {"verb", "watch"}})) == 1);
}

TEST_CASE("webhook handler counters become labelled series") {
  service_metrics metrics;
  webhook_stats w;
  w.queue_depth = 3;
  w.in_flight = 10;
  w.received = 100;
  w.sent = 80;
  w.coalesced = 5;
  w.dropped = 2;
  w.abandoned = 1;
  w.posts_ok = 8;
  w.posts_failed = 3;
  w.retries = 3;
  metrics.update("audit", w);
  auto s = parse(metrics.render());
  CHECK(s.at(R"(kinformer_webhook_queue_depth{handler="audit",state="waiting"})") == 3);
  CHECK(s.at(R"(kinformer_webhook_queue_depth{handler="audit",state="in_flight"})") == 10);
  CHECK(s.at(R"(kinformer_webhook_deltas_total{handler="audit",outcome="received"})") == 100);
  CHECK(s.at(R"(kinformer_webhook_deltas_total{handler="audit",outcome="sent"})") == 80);
  CHECK(s.at(R"(kinformer_webhook_deltas_total{handler="audit",outcome="dropped"})") == 2);
  CHECK(s.at(R"(kinformer_webhook_posts_total{handler="audit",result="failed"})") == 3);
  CHECK(s.at(R"(kinformer_webhook_retries_total{handler="audit"})") == 3);
}

TEST_CASE("process metrics come from /proc") {
  service_metrics metrics;
  auto s = parse(metrics.render());
  CHECK(s.at("process_resident_memory_bytes") > 1024 * 1024);
  CHECK(s.at("process_open_fds") >= 3); // stdin, stdout, stderr at least
  CHECK(s.at("process_cpu_seconds_total") >= 0);
  auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch());
  CHECK(s.at("process_start_time_seconds") <= now.count() + 1);
  CHECK(s.at("process_start_time_seconds") > now.count() - 24 * 3600);
  CHECK(s.types.at("process_cpu_seconds_total") == "counter");
}

TEST_CASE("heap metrics say how much of the resident memory is live heap") {
  service_metrics metrics;
  auto s = parse(metrics.render());
  CHECK(s.types.at("kinformer_heap_in_use_bytes") == "gauge");
  CHECK(s.types.at("kinformer_heap_trims_total") == "counter");
  CHECK(s.at("kinformer_heap_trims_total") == static_cast<double>(heap_trims_total()));
#if !defined(KINFORMER_SANITIZED_ALLOCATOR)
  // (The sanitizers' allocators are not glibc's: mallinfo2 does not see them.)
  // 32 MiB allocated and written between two scrapes shows in the live heap.
  constexpr std::size_t chunk = 4096, count = 8192;
  std::vector<std::unique_ptr<char[]>> chunks;
  for (std::size_t i = 0; i < count; ++i) {
    chunks.emplace_back(new char[chunk]);
    std::memset(chunks.back().get(), 1, chunk);
  }
  auto grown = parse(metrics.render());
  CHECK(grown.at("kinformer_heap_in_use_bytes") >=
        s.at("kinformer_heap_in_use_bytes") + count * chunk);
  CHECK(grown.at("kinformer_heap_in_use_bytes") <= grown.at("process_resident_memory_bytes"));
#endif
}

TEST_CASE("/proc/self/stat parsing copes with odd command names and rejects bad text") {
  const std::string system_stat = "cpu  1 2 3\nbtime 1700000000\nprocesses 5\n";
  // Field 2 holds spaces and a ')'; utime 150, stime 50, starttime 1000, vsize, rss in pages.
  const std::string pid_stat = "4242 (kinf (x) d) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 "
                               "20 0 3 0 1000 104857600 2560 18446744073709551615";
  auto sample = parse_proc_stat(pid_stat, system_stat, 100, 4096);
  REQUIRE(sample);
  CHECK(sample->cpu_seconds == Approx(2.0));
  CHECK(sample->start_time_seconds == Approx(1700000010.0));
  CHECK(sample->virtual_memory_bytes == 104857600);
  CHECK(sample->resident_memory_bytes == 2560u * 4096u);

  CHECK_FALSE(parse_proc_stat("", system_stat, 100, 4096));
  CHECK_FALSE(parse_proc_stat("4242 (short) S 1 2", system_stat, 100, 4096));
  CHECK_FALSE(parse_proc_stat(pid_stat, "cpu 1 2 3\n", 100, 4096));
  CHECK_FALSE(parse_proc_stat(pid_stat, "btime soon\n", 100, 4096));
  auto garbled = pid_stat;
  garbled.replace(garbled.find("150"), 3, "x50");
  CHECK_FALSE(parse_proc_stat(garbled, system_stat, 100, 4096));
}

TEST_CASE("readiness names the informers not synced yet") {
  cache_stats stats;
  stats.informers.push_back(config_maps("default"));
  auto pods = config_maps("");
  pods.kind = "v1, Kind=Pod";
  pods.stats.synced = false;
  stats.informers.push_back(pods);

  auto not_ready = readiness(stats);
  CHECK(not_ready.status == 503);
  CHECK(not_ready.body.find("1 of 2") != std::string::npos);
  CHECK(not_ready.body.find("v1, Kind=Pod") != std::string::npos);
  CHECK(not_ready.body.find("ConfigMap") == std::string::npos);

  stats.informers[1].stats.synced = true;
  auto ready = readiness(stats);
  CHECK(ready.status == 200);
  CHECK(ready.body.find("2 informers synced") != std::string::npos);

  CHECK(readiness(cache_stats{}).status == 200);
  CHECK(readiness(std::nullopt).status == 503);

  // Before start-up has reached the API server, not ready, and why.
  auto waiting = readiness(cache_stats{}, "connecting to 127.0.0.1:6443: Connection refused");
  CHECK(waiting.status == 503);
  CHECK(
      waiting.body ==
      "not ready: waiting for the API server: connecting to 127.0.0.1:6443: Connection refused\n");
}

TEST_CASE("liveness fails only when the cache does not answer") {
  cache_stats stats;
  auto pods = config_maps("");
  pods.stats.synced = false;
  stats.informers.push_back(pods);
  CHECK(liveness(stats).status == 200);
  auto dead = liveness(std::nullopt);
  CHECK(dead.status == 503);
  CHECK(dead.body.find("did not answer") != std::string::npos);
}

TEST_CASE("the read API's requests, watches, bytes and dropped clients are exported") {
  service_metrics m;
  service::read_api_stats api;
  api.requests[{"list", 200}] = 3;
  api.requests[{"watch", 429}] = 1;
  api.open_watches = 2;
  api.unpaged_lists = 1;
  apiserver::http_server_stats server{4, 1, 12345};
  m.update(api, server);
  api.requests[{"list", 200}] = 5; // cumulative: the counter follows
  m.update(api, server);
  auto s = parse(m.render());
  CHECK(s.at(key("kinformer_read_api_requests_total", {{"verb", "list"}, {"code", "200"}})) == 5);
  CHECK(s.at(key("kinformer_read_api_requests_total", {{"verb", "watch"}, {"code", "429"}})) == 1);
  CHECK(s.at("kinformer_read_api_open_watches") == 2);
  CHECK(s.at("kinformer_read_api_unpaged_lists") == 1);
  CHECK(s.at("kinformer_read_api_bytes_written_total") == 12345);
  CHECK(s.at("kinformer_read_api_slow_clients_dropped_total") == 1);
  CHECK(s.at("kinformer_read_api_connections_refused_total") == 4);
  CHECK(s.types.at("kinformer_read_api_requests_total") == "counter");
  CHECK(s.types.at("kinformer_read_api_open_watches") == "gauge");
}
