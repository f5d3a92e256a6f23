#include "app/kinformerd/metrics.hpp"

#include "app/apiserver/http_server.hpp"
#include "app/kinformerd/read_api.hpp"

#include "app/kinformerd/process_metrics.hpp"
#include "app/kinformerd/webhook_handler.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace kinformer {

namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Labels;

// Request durations to the API server (client-go's rest_client_request_duration_seconds).
const Histogram::BucketBoundaries request_buckets{0.005, 0.025, 0.1, 0.25, 0.5, 1,
                                                  2,     4,     8,   15,   30,  60};

// A Prometheus counter that follows a cumulative count kept elsewhere.
struct followed_counter {
  Counter* counter = nullptr;
  std::uint64_t last = 0;

  void follow(std::uint64_t value) {
    // Lower than before: the source restarted and counts again from zero.
    counter->Increment(static_cast<double>(value >= last ? value - last : value));
    last = value;
  }
};

// Bucket bounds prometheus-cpp accepts (ascending, finite) with a count for each bucket plus
// +Inf; anything else cannot be followed and is skipped rather than thrown on.
bool well_formed(const histogram& h) {
  return h.counts.size() == h.bounds.size() + 1 &&
         std::all_of(h.bounds.begin(), h.bounds.end(), [](double b) { return std::isfinite(b); }) &&
         std::adjacent_find(h.bounds.begin(), h.bounds.end(), std::greater_equal<>()) ==
             h.bounds.end();
}

// A Prometheus histogram that follows a cumulative histogram kept elsewhere: prometheus-cpp's
// Histogram cannot be set, so each update observes the bucket counts and sum that grew since
// the previous one.
struct followed_histogram {
  Histogram* metric = nullptr;
  histogram last; // the snapshot already observed; its bounds are the series' bounds

  void follow(const histogram& now) {
    // The series' buckets are fixed when it is created; a snapshot with other bounds cannot be
    // merged into it (the bounds come from the build, so this does not happen in practice).
    if (now.bounds != last.bounds || !well_formed(now))
      return;
    bool restarted = now.count < last.count;
    for (std::size_t i = 0; i < now.counts.size(); ++i)
      restarted = restarted || now.counts[i] < last.counts[i];
    if (restarted)
      rebase();
    std::vector<double> increments(now.counts.size());
    for (std::size_t i = 0; i < now.counts.size(); ++i)
      increments[i] = static_cast<double>(now.counts[i] - last.counts[i]);
    if (now.count != last.count)
      metric->ObserveMultiple(increments, now.sum - last.sum);
    last = now;
  }
  // The source starts again from zero.
  void rebase() { last = histogram(last.bounds); }
};

// Every series of one informer or one subscription, so that they can be removed together.
class series_group {
public:
  followed_counter& counter(const std::string& id, Family<Counter>& family, const Labels& labels) {
    auto [it, inserted] = counters_.try_emplace(id);
    if (inserted)
      it->second.counter = &add(family, labels);
    return it->second;
  }
  Gauge& gauge(const std::string& id, Family<Gauge>& family, const Labels& labels) {
    auto [it, inserted] = gauges_.try_emplace(id, nullptr);
    if (inserted)
      it->second = &add(family, labels);
    return *it->second;
  }
  // Created with the bounds of the first snapshot; nothing when that one is malformed.
  void follow(const std::string& id, Family<Histogram>& family, const Labels& labels,
              const histogram& snapshot) {
    auto it = histograms_.find(id);
    if (it == histograms_.end()) {
      if (!well_formed(snapshot))
        return;
      it = histograms_.emplace(id, followed_histogram{nullptr, histogram(snapshot.bounds)}).first;
      it->second.metric = &add(family, labels, snapshot.bounds);
    }
    it->second.follow(snapshot);
  }
  // The source restarted: its next values count from zero.
  void rebase() {
    for (auto& [id, c] : counters_)
      c.last = 0;
    for (auto& [id, h] : histograms_)
      h.rebase();
  }
  void remove_all() {
    for (auto& remove : removers_)
      remove();
    removers_.clear();
    counters_.clear();
    gauges_.clear();
    histograms_.clear();
  }

private:
  template <class T, class... Args>
  T& add(Family<T>& family, const Labels& labels, Args&&... args) {
    T& metric = family.Add(labels, std::forward<Args>(args)...);
    removers_.push_back([&family, &metric] { family.Remove(&metric); });
    return metric;
  }

  std::vector<std::function<void()>> removers_;
  std::map<std::string, followed_counter> counters_;
  std::map<std::string, Gauge*> gauges_;
  std::map<std::string, followed_histogram> histograms_;
};

// An informer's series and those of its subscriptions (by subscription name): the
// subscriptions' counts live in the informer, so they restart with it.
struct informer_series {
  series_group own;
  series_group cache_counts; // kept by the cache, so they survive the informer's restarts
  std::map<std::string, series_group> subscriptions;
  std::uint64_t restarts = 0; // the cache's restart count at the previous update

  void remove_all() {
    own.remove_all();
    cache_counts.remove_all();
    for (auto& [name, g] : subscriptions)
      g.remove_all();
    subscriptions.clear();
  }
};

Labels with(Labels labels, const std::string& name, const std::string& value) {
  labels.emplace(name, value);
  return labels;
}

// Removes the series of the groups whose key is not in `live`.
template <class Group>
void prune(std::map<std::string, Group>& groups, const std::set<std::string>& live) {
  for (auto it = groups.begin(); it != groups.end();) {
    if (live.count(it->first)) {
      ++it;
      continue;
    }
    it->second.remove_all();
    it = groups.erase(it);
  }
}

} // namespace

struct service_metrics::impl {
  prometheus::Registry registry;

  // The read API.
  Family<Counter>& read_api_requests =
      prometheus::BuildCounter()
          .Name("kinformer_read_api_requests_total")
          .Help("Read API requests answered, by verb (get, list, watch, discovery) and code.")
          .Register(registry);
  Family<Gauge>& read_api_open_watches = prometheus::BuildGauge()
                                             .Name("kinformer_read_api_open_watches")
                                             .Help("Read API watches open now.")
                                             .Register(registry);
  Family<Gauge>& read_api_unpaged_lists =
      prometheus::BuildGauge()
          .Name("kinformer_read_api_unpaged_lists")
          .Help("Read API lists without a limit being answered now (bounded by "
                "listen.api_max_unpaged_lists).")
          .Register(registry);
  Family<Counter>& read_api_bytes = prometheus::BuildCounter()
                                        .Name("kinformer_read_api_bytes_written_total")
                                        .Help("Bytes the read API wrote, headers included.")
                                        .Register(registry);
  Family<Counter>& read_api_slow_dropped =
      prometheus::BuildCounter()
          .Name("kinformer_read_api_slow_clients_dropped_total")
          .Help("Read API streams dropped because their client read too slowly (buffer bound "
                "or write timeout).")
          .Register(registry);
  Family<Counter>& read_api_refused =
      prometheus::BuildCounter()
          .Name("kinformer_read_api_connections_refused_total")
          .Help("Read API connections answered 429 past the connection bound.")
          .Register(registry);

  // Informers.
  Family<Gauge>& objects = prometheus::BuildGauge()
                               .Name("kinformer_informer_objects")
                               .Help("Objects in the informer's store.")
                               .Register(registry);
  Family<Counter>& events =
      prometheus::BuildCounter()
          .Name("kinformer_informer_events_total")
          .Help("Watch events received, by type (ADDED, MODIFIED, DELETED, BOOKMARK).")
          .Register(registry);
  Family<Counter>& lists = prometheus::BuildCounter()
                               .Name("kinformer_informer_lists_total")
                               .Help("Completed lists (the first one and every relist).")
                               .Register(registry);
  Family<Histogram>& list_duration =
      prometheus::BuildHistogram()
          .Name("kinformer_informer_list_duration_seconds")
          .Help("How long a complete list took, all pages (the first list and relists).")
          .Register(registry);
  Family<Counter>& list_items_reused =
      prometheus::BuildCounter()
          .Name("kinformer_informer_list_items_reused_total")
          .Help("Listed items handed on as the objects already stored, not made again (a "
                "relist's unchanged ones).")
          .Register(registry);
  Family<Counter>& relists = prometheus::BuildCounter()
                                 .Name("kinformer_informer_relists_total")
                                 .Help("Lists started after the first, by reason.")
                                 .Register(registry);
  // Every watch start, not only restarts: reason list_complete is the watch that follows a
  // (re)list (relists carry their own reason above); any other reason is why the previous
  // watch ended, re-watched from the last resourceVersion without a relist.
  Family<Counter>& watch_starts =
      prometheus::BuildCounter()
          .Name("kinformer_informer_watch_starts_total")
          .Help("Watches started, by reason: list_complete after a (re)list, else why the "
                "previous watch ended.")
          .Register(registry);
  Family<Counter>& retries = prometheus::BuildCounter()
                                 .Name("kinformer_informer_retries_total")
                                 .Help("Backoffs after a failed list or watch.")
                                 .Register(registry);
  Family<Counter>& informer_restarts =
      prometheus::BuildCounter()
          .Name("kinformer_informer_restarts_total")
          .Help("Times the cache restarted this informer after a failure.")
          .Register(registry);
  Family<Gauge>& restart_backoff =
      prometheus::BuildGauge()
          .Name("kinformer_informer_restart_backoff_seconds")
          .Help("The cache's wait before its latest (or pending) restart of this informer.")
          .Register(registry);
  Family<Gauge>& restart_pending =
      prometheus::BuildGauge()
          .Name("kinformer_informer_restart_pending")
          .Help("1 while the informer has failed and its replacement waits out the backoff.")
          .Register(registry);
  Family<Gauge>& synced = prometheus::BuildGauge()
                              .Name("kinformer_informer_synced")
                              .Help("1 once the informer's first list is in its store.")
                              .Register(registry);
  Family<Gauge>& rv_age =
      prometheus::BuildGauge()
          .Name("kinformer_informer_last_resource_version_age_seconds")
          .Help("Seconds since the informer's last watch event or bookmark (NaN before the first).")
          .Register(registry);
  Family<Gauge>& subscriptions = prometheus::BuildGauge()
                                     .Name("kinformer_informer_subscriptions")
                                     .Help("Handlers subscribed to the informer.")
                                     .Register(registry);

  // Handler subscriptions.
  Family<Gauge>& queue_depth = prometheus::BuildGauge()
                                   .Name("kinformer_handler_queue_depth")
                                   .Help("Deltas waiting in the subscription's queue.")
                                   .Register(registry);
  Family<Gauge>& queue_high_water = prometheus::BuildGauge()
                                        .Name("kinformer_handler_queue_high_water")
                                        .Help("The largest depth the subscription's queue reached.")
                                        .Register(registry);
  Family<Counter>& delivered = prometheus::BuildCounter()
                                   .Name("kinformer_handler_delivered_total")
                                   .Help("Deltas delivered to the handler.")
                                   .Register(registry);
  Family<Counter>& coalesced = prometheus::BuildCounter()
                                   .Name("kinformer_handler_coalesced_total")
                                   .Help("Deltas folded into a queued delta of the same object.")
                                   .Register(registry);
  Family<Counter>& overflowed =
      prometheus::BuildCounter()
          .Name("kinformer_handler_overflowed_total")
          .Help("Deltas queued past the bound because they could not coalesce.")
          .Register(registry);
  Family<Gauge>& handler_synced = prometheus::BuildGauge()
                                      .Name("kinformer_handler_synced")
                                      .Help("1 once the handler received its initial state.")
                                      .Register(registry);
  Family<Histogram>& delivery_lag =
      prometheus::BuildHistogram()
          .Name("kinformer_handler_delivery_lag_seconds")
          .Help("From sending a batch of deltas to the handler to its acknowledgement.")
          .Register(registry);

  // Webhook handlers.
  Family<Gauge>& webhook_queue = prometheus::BuildGauge()
                                     .Name("kinformer_webhook_queue_depth")
                                     .Help("Deltas waiting for a POST, and in the POST in flight.")
                                     .Register(registry);
  Family<Counter>& webhook_deltas =
      prometheus::BuildCounter()
          .Name("kinformer_webhook_deltas_total")
          .Help("Deltas by outcome: received, sent, coalesced, dropped, abandoned.")
          .Register(registry);
  Family<Counter>& webhook_posts = prometheus::BuildCounter()
                                       .Name("kinformer_webhook_posts_total")
                                       .Help("POSTs by result (ok, failed); retries count again.")
                                       .Register(registry);
  Family<Counter>& webhook_retries = prometheus::BuildCounter()
                                         .Name("kinformer_webhook_retries_total")
                                         .Help("POSTs repeated after a failure.")
                                         .Register(registry);

  // Leader election (client-go's leader_election_master_status).
  Family<Gauge>& leading = prometheus::BuildGauge()
                               .Name("kinformer_leader_election_leading")
                               .Help("1 while this replica holds the Lease (label lease).")
                               .Register(registry);

  // The API client.
  Family<Counter>& api_requests =
      prometheus::BuildCounter()
          .Name("kinformer_api_requests_total")
          .Help("Requests to the API server by verb and HTTP code (0: no response).")
          .Register(registry);
  Family<Histogram>& api_request_duration =
      prometheus::BuildHistogram()
          .Name("kinformer_api_request_duration_seconds")
          .Help("Requests to the API server by verb: a list or get until its body is read, a "
                "watch until its response header.")
          .Register(registry);

  std::mutex mutex;                                 // guards the maps below
  std::map<std::string, informer_series> informers; // by kind + namespace
  std::map<std::string, series_group> webhooks;

  void update_informer(series_group& g, const Labels& labels, const informer_stats& s,
                       std::chrono::steady_clock::time_point now) {
    g.gauge("objects", objects, labels).Set(static_cast<double>(s.objects));
    g.gauge("synced", synced, labels).Set(s.synced ? 1 : 0);
    g.gauge("subscriptions", subscriptions, labels).Set(static_cast<double>(s.subscriptions));
    double age = std::numeric_limits<double>::quiet_NaN();
    if (s.last_event != std::chrono::steady_clock::time_point{})
      age = std::max(0.0, std::chrono::duration<double>(now - s.last_event).count());
    g.gauge("rv_age", rv_age, labels).Set(age);
    g.counter("added", events, with(labels, "type", "ADDED")).follow(s.events_added);
    g.counter("modified", events, with(labels, "type", "MODIFIED")).follow(s.events_modified);
    g.counter("deleted", events, with(labels, "type", "DELETED")).follow(s.events_deleted);
    g.counter("bookmark", events, with(labels, "type", "BOOKMARK")).follow(s.bookmarks);
    g.counter("lists", lists, labels).follow(s.lists);
    g.counter("list_items_reused", list_items_reused, labels).follow(s.list_items_reused);
    g.follow("list_duration", list_duration, labels, s.list_seconds);
    for (const auto& [reason, count] : s.relists_by_reason)
      g.counter("relists/" + reason, relists, with(labels, "reason", reason)).follow(count);
    for (const auto& [reason, count] : s.watch_starts_by_reason)
      g.counter("watch_starts/" + reason, watch_starts, with(labels, "reason", reason))
          .follow(count);
    g.counter("retries", retries, labels).follow(s.retries);
  }

  void update_subscription(series_group& g, const Labels& labels, const subscription_stats& q) {
    g.gauge("depth", queue_depth, labels).Set(static_cast<double>(q.depth));
    g.gauge("high_water", queue_high_water, labels).Set(static_cast<double>(q.high_water));
    g.gauge("synced", handler_synced, labels).Set(q.synced ? 1 : 0);
    g.counter("delivered", delivered, labels).follow(q.delivered);
    g.counter("coalesced", coalesced, labels).follow(q.coalesced);
    g.counter("overflowed", overflowed, labels).follow(q.over_bound);
    g.follow("delivery_lag", delivery_lag, labels, q.delivery_lag);
  }
};

service_metrics::service_metrics() : impl_(std::make_unique<impl>()) {}
service_metrics::~service_metrics() = default;

prometheus::Registry& service_metrics::registry() {
  return impl_->registry;
}

void service_metrics::update(const cache_stats& stats, std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(impl_->mutex);
  std::set<std::string> live_informers;
  for (const auto& info : stats.informers) {
    Labels labels{{"kind", info.kind}, {"namespace", info.namespace_}};
    auto informer_id = info.kind + '\n' + info.namespace_;
    live_informers.insert(informer_id);
    auto [it, inserted] = impl_->informers.try_emplace(informer_id);
    auto& series = it->second;
    // The cache replaced the informer: every count of the new one, its subscriptions' too,
    // starts from zero, even one that has already grown past the old value.
    if (!inserted && info.restarts != series.restarts) {
      series.own.rebase();
      for (auto& [name, g] : series.subscriptions)
        g.rebase();
    }
    series.restarts = info.restarts;
    series.cache_counts.counter("restarts", impl_->informer_restarts, labels).follow(info.restarts);
    series.cache_counts.gauge("restart_backoff", impl_->restart_backoff, labels)
        .Set(std::chrono::duration<double>(info.restart_delay).count());
    series.cache_counts.gauge("restart_pending", impl_->restart_pending, labels)
        .Set(info.restart_pending ? 1 : 0);
    impl_->update_informer(series.own, labels, info.stats, now);

    std::set<std::string> live_subscriptions;
    for (const auto& q : info.stats.queues) {
      // Unnamed subscriptions, and further ones of the same name, are told apart by their id.
      auto name = q.name;
      if (name.empty() || live_subscriptions.count(name)) {
        name += '#';
        name += std::to_string(q.id);
      }
      live_subscriptions.insert(name);
      impl_->update_subscription(series.subscriptions[name], with(labels, "subscription", name), q);
    }
    prune(series.subscriptions, live_subscriptions);
  }
  prune(impl_->informers, live_informers);
}

void service_metrics::update(std::string_view handler, const webhook_stats& s) {
  std::lock_guard lock(impl_->mutex);
  auto& g = impl_->webhooks[std::string(handler)];
  Labels labels{{"handler", std::string(handler)}};
  auto& deltas = impl_->webhook_deltas;
  g.gauge("queue", impl_->webhook_queue, with(labels, "state", "waiting"))
      .Set(static_cast<double>(s.queue_depth));
  g.gauge("in_flight", impl_->webhook_queue, with(labels, "state", "in_flight"))
      .Set(static_cast<double>(s.in_flight));
  g.counter("received", deltas, with(labels, "outcome", "received")).follow(s.received);
  g.counter("sent", deltas, with(labels, "outcome", "sent")).follow(s.sent);
  g.counter("coalesced", deltas, with(labels, "outcome", "coalesced")).follow(s.coalesced);
  g.counter("dropped", deltas, with(labels, "outcome", "dropped")).follow(s.dropped);
  g.counter("abandoned", deltas, with(labels, "outcome", "abandoned")).follow(s.abandoned);
  g.counter("posts_ok", impl_->webhook_posts, with(labels, "result", "ok")).follow(s.posts_ok);
  g.counter("posts_failed", impl_->webhook_posts, with(labels, "result", "failed"))
      .follow(s.posts_failed);
  g.counter("retries", impl_->webhook_retries, labels).follow(s.retries);
}

void service_metrics::count_api_request(std::string_view verb, int code,
                                        std::optional<std::chrono::duration<double>> duration) {
  Labels labels{{"verb", std::string(verb)}};
  impl_->api_requests.Add(with(labels, "code", std::to_string(code))).Increment();
  if (duration)
    impl_->api_request_duration.Add(labels, request_buckets).Observe(duration->count());
}

namespace {

// Moves a counter up to a cumulative `total` read from a component's own count.
void advance_to(Counter& counter, double total) {
  if (total > counter.Value())
    counter.Increment(total - counter.Value());
}

} // namespace

void service_metrics::update(const service::read_api_stats& api,
                             const apiserver::http_server_stats& server) {
  for (const auto& [key, count] : api.requests)
    advance_to(
        impl_->read_api_requests.Add({{"verb", key.first}, {"code", std::to_string(key.second)}}),
        static_cast<double>(count));
  impl_->read_api_open_watches.Add({}).Set(static_cast<double>(api.open_watches));
  impl_->read_api_unpaged_lists.Add({}).Set(static_cast<double>(api.unpaged_lists));
  advance_to(impl_->read_api_bytes.Add({}), static_cast<double>(server.bytes_written));
  advance_to(impl_->read_api_slow_dropped.Add({}),
             static_cast<double>(server.slow_streams_dropped));
  advance_to(impl_->read_api_refused.Add({}), static_cast<double>(server.connections_refused));
}

void service_metrics::set_leading(std::string_view lease, bool leading) {
  impl_->leading.Add({{"lease", std::string(lease)}}).Set(leading ? 1 : 0);
}

std::string service_metrics::render() const {
  auto families = impl_->registry.Collect();
  if (auto sample = read_process_sample())
    for (auto& f : process_metric_families(*sample))
      families.push_back(std::move(f));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

} // namespace kinformer
