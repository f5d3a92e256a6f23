#include "app/kubesim/churn.hpp"

#include "app/kubesim/storage.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <pthread.h>

namespace json = boost::json;

namespace kinformer::sim {

churn::churn(storage& store, churn_options options)
    : store_(store), options_(options), generator_(options.generator) {}

churn::~churn() {
  stop();
}

void churn::read_pods() {
  // Read first: a restore during the read is then seen at the next step.
  restores_seen_ = store_.backups_restored();
  pods_.clear();
  // The truth, not a list: an armed list fault must neither fail this read (churn would then
  // think no pod exists) nor be used up by it.
  for (const auto& pod : store_.truth(pods_resource)) {
    const auto slash = pod.key.find('/');
    if (slash != std::string::npos)
      pods_.push_back({pod.key.substr(0, slash), pod.key.substr(slash + 1)});
  }
}

void churn::load_population() {
  if (loaded_)
    return;
  loaded_ = true;
  read_pods();
  target_population_ =
      options_.population != 0 ? options_.population : std::max<std::size_t>(pods_.size(), 1);
  // New pods need their namespaces; existing ones are left as they are.
  for (std::size_t i = 0; i < std::max<std::size_t>(options_.namespaces, 1); ++i) {
    std::string name = object_generator::namespace_name(i);
    (void)store_.create_value(namespaces_resource, "", generator_.namespace_object(name));
  }
  std::lock_guard lock(mutex_);
  population_ = pods_.size();
}

churn::action churn::pick_action() {
  const unsigned weights[] = {options_.create_weight + options_.delete_weight,
                              options_.label_weight, options_.status_weight, options_.spec_weight};
  unsigned total = 0;
  for (unsigned w : weights)
    total += w;
  if (total == 0 || pods_.empty())
    return action::create;
  std::uint64_t roll = generator_.random().below(total);
  if (roll < weights[0]) {
    // Creates and deletes hold the population at its target; at the target, a coin decides.
    if (pods_.size() != target_population_)
      return pods_.size() < target_population_ ? action::create : action::remove;
    return roll < options_.create_weight ? action::create : action::remove;
  }
  roll -= weights[0];
  if (roll < weights[1])
    return action::relabel;
  roll -= weights[1];
  return roll < weights[2] ? action::restatus : action::respec;
}

void churn::step() {
  // A restore from a backup brought back pods churn had deleted (and removed ones it created):
  // without reading them again, they would never be deleted and the population would grow.
  if (store_.backups_restored() != restores_seen_)
    read_pods();
  action what = pick_action();
  bool ok = false;
  switch (what) {
  case action::create:
    ok = create_pod();
    break;
  case action::remove:
    ok = remove_pod();
    break;
  default:
    ok = update_pod(what);
    break;
  }
  std::lock_guard lock(mutex_);
  population_ = pods_.size();
  if (!ok) {
    ++stats_.failures;
    return;
  }
  switch (what) {
  case action::create:
    ++stats_.creates;
    break;
  case action::remove:
    ++stats_.deletes;
    break;
  case action::relabel:
    ++stats_.label_updates;
    break;
  case action::restatus:
    ++stats_.status_updates;
    break;
  case action::respec:
    ++stats_.spec_updates;
    break;
  }
}

bool churn::create_pod() {
  std::string ns = object_generator::namespace_name(
      generator_.random().below(std::max<std::size_t>(options_.namespaces, 1)));
  auto created = store_.create_value(pods_resource, ns, generator_.pod(ns));
  if (!created)
    return false;
  const auto& meta = created->object->meta();
  pods_.push_back({std::string(meta.namespace_), std::string(meta.name)});
  return true;
}

bool churn::remove_pod() {
  std::size_t index = generator_.random().below(pods_.size());
  pod_ref pod = std::move(pods_[index]);
  pods_[index] = std::move(pods_.back());
  pods_.pop_back();
  // A pod someone else deleted is gone either way; only other refusals count as failures.
  auto removed = store_.remove(pods_resource, pod.ns, pod.name);
  return removed.ok() || removed.failure().code == 404;
}

bool churn::update_pod(action what) {
  std::size_t index = generator_.random().below(pods_.size());
  const pod_ref& pod = pods_[index];
  auto current = store_.get(pods_resource, pod.ns, pod.name);
  if (!current) {
    if (current.failure().code == 404) { // deleted by someone else: forget it
      pods_[index] = std::move(pods_.back());
      pods_.pop_back();
    }
    return false;
  }
  // A working copy carrying metadata.resourceVersion (a CAS write), in a scratch arena that goes
  // with it: the write stores its own compact copy.
  json::value body = current->object->tree(json::make_shared_resource<json::monotonic_resource>());
  switch (what) {
  case action::relabel:
    generator_.change_labels(body);
    break;
  case action::restatus:
    generator_.change_status(body);
    break;
  default:
    generator_.change_spec(body);
    break;
  }
  return store_.update_value(pods_resource, pod.ns, pod.name, std::move(body)).ok();
}

void churn::run(std::uint64_t limit, std::chrono::steady_clock::time_point deadline) {
  using clock = std::chrono::steady_clock;
  load_population();
  const auto started = clock::now();
  for (std::uint64_t done = 0; limit == 0 || done < limit; ++done) {
    if (options_.rate > 0) {
      // Pace against the start time, so the rate holds on average whatever each write costs.
      auto due = started + std::chrono::duration_cast<clock::duration>(
                               std::chrono::duration<double>(done / options_.rate));
      std::unique_lock lock(mutex_);
      wake_.wait_until(lock, std::min(due, deadline), [&] { return stop_requested_; });
    }
    {
      std::lock_guard lock(mutex_);
      if (stop_requested_)
        break;
    }
    if (clock::now() >= deadline)
      break;
    step();
  }
  std::lock_guard lock(mutex_);
  finished_ = true;
  wake_.notify_all();
}

void churn::start() {
  std::lock_guard lock(mutex_);
  if (!finished_)
    return;
  if (worker_.joinable())
    worker_.join(); // a finished run: its thread has ended or is about to
  stop_requested_ = false;
  finished_ = false;
  auto deadline = options_.duration.count() > 0
                      ? std::chrono::steady_clock::now() + options_.duration
                      : std::chrono::steady_clock::time_point::max();
  worker_ = std::thread([this, deadline] {
    pthread_setname_np(pthread_self(), "kubesim-churn");
    run(options_.count, deadline);
  });
}

void churn::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    wake_.notify_all();
  }
  if (worker_.joinable())
    worker_.join();
}

void churn::wait() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return finished_; });
}

bool churn::running() const {
  std::lock_guard lock(mutex_);
  return !finished_;
}

void churn::run_steps(std::uint64_t steps) {
  load_population();
  for (std::uint64_t i = 0; i < steps; ++i)
    step();
}

churn_stats churn::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::size_t churn::population() const {
  std::lock_guard lock(mutex_);
  return population_;
}

} // namespace kinformer::sim
