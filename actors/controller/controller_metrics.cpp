#include "actors/controller/controller_metrics.hpp"

#include <charconv>
#include <cmath>
#include <functional>

namespace kinformer {
namespace {

std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  char text[32];
  auto end = std::to_chars(text, text + sizeof text, v).ptr; // shortest round-trip: 0.005
  return std::string(text, end);
}

class exposition {
public:
  // One family: its HELP and TYPE, then a sample per controller from `sample`.
  void family(const char* name, const char* type, const char* help,
              const std::function<void(const controller_stats&)>& sample) {
    out_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& c : *controllers_)
      sample(c);
  }
  void value(const std::string& name, const std::string& labels, double v) {
    out_ += name + "{" + labels + "} " + number(v) + "\n";
  }
  void histogram_of(const std::string& name, const std::string& labels, const histogram& h) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= h.bounds.size(); ++i) {
      cumulative += i < h.counts.size() ? h.counts[i] : 0;
      double le = i < h.bounds.size() ? h.bounds[i] : INFINITY;
      value(name + "_bucket", labels + ",le=\"" + number(le) + "\"",
            static_cast<double>(cumulative));
    }
    value(name + "_sum", labels, h.sum);
    value(name + "_count", labels, static_cast<double>(h.count));
  }

  explicit exposition(const std::vector<controller_stats>& controllers)
      : controllers_(&controllers) {}
  std::string take() { return std::move(out_); }

private:
  const std::vector<controller_stats>* controllers_;
  std::string out_;
};

std::string controller_label(const controller_stats& c) {
  return "controller=\"" + escaped(c.name) + "\"";
}
std::string queue_label(const controller_stats& c) {
  return "name=\"" + escaped(c.name) + "\"";
}

} // namespace

std::string prometheus_text(const std::vector<controller_stats>& controllers) {
  exposition e(controllers);
  e.family("controller_runtime_reconcile_total", "counter",
           "Total number of reconciliations per controller.", [&](const controller_stats& c) {
             auto l = controller_label(c);
             e.value("controller_runtime_reconcile_total", l + ",result=\"success\"",
                     static_cast<double>(c.reconciles_succeeded));
             e.value("controller_runtime_reconcile_total", l + ",result=\"error\"",
                     static_cast<double>(c.reconciles_failed));
             e.value("controller_runtime_reconcile_total", l + ",result=\"requeue\"",
                     static_cast<double>(c.reconciles_requeued));
             e.value("controller_runtime_reconcile_total", l + ",result=\"requeue_after\"",
                     static_cast<double>(c.reconciles_requeued_after));
           });
  e.family("controller_runtime_reconcile_errors_total", "counter",
           "Total number of reconciliation errors per controller.", [&](const controller_stats& c) {
             e.value("controller_runtime_reconcile_errors_total", controller_label(c),
                     static_cast<double>(c.reconciles_failed));
           });
  e.family("controller_runtime_reconcile_time_seconds", "histogram",
           "Length of time per reconciliation per controller.", [&](const controller_stats& c) {
             e.histogram_of("controller_runtime_reconcile_time_seconds", controller_label(c),
                            c.reconcile_seconds);
           });
  e.family("controller_runtime_active_workers", "gauge",
           "Number of currently used workers per controller.", [&](const controller_stats& c) {
             e.value("controller_runtime_active_workers", controller_label(c),
                     static_cast<double>(c.busy_workers));
           });
  e.family("controller_runtime_max_concurrent_reconciles", "gauge",
           "Maximum number of concurrent reconciles per controller.",
           [&](const controller_stats& c) {
             e.value("controller_runtime_max_concurrent_reconciles", controller_label(c),
                     static_cast<double>(c.workers));
           });
  e.family("workqueue_depth", "gauge", "Current depth of workqueue (delayed keys not included).",
           [&](const controller_stats& c) {
             e.value("workqueue_depth", queue_label(c), static_cast<double>(c.queue_depth));
           });
  e.family("workqueue_adds_total", "counter", "Total number of adds handled by workqueue.",
           [&](const controller_stats& c) {
             e.value("workqueue_adds_total", queue_label(c), static_cast<double>(c.queue.adds));
           });
  e.family("workqueue_retries_total", "counter", "Total number of retries handled by workqueue.",
           [&](const controller_stats& c) {
             e.value("workqueue_retries_total", queue_label(c),
                     static_cast<double>(c.queue.retries));
           });
  e.family("workqueue_queue_duration_seconds", "histogram",
           "How long in seconds an item stays in workqueue before being requested.",
           [&](const controller_stats& c) {
             e.histogram_of("workqueue_queue_duration_seconds", queue_label(c),
                            c.queue.queue_seconds);
           });
  e.family("workqueue_work_duration_seconds", "histogram",
           "How long in seconds processing an item from workqueue takes.",
           [&](const controller_stats& c) {
             e.histogram_of("workqueue_work_duration_seconds", queue_label(c),
                            c.queue.work_seconds);
           });
  e.family("workqueue_unfinished_work_seconds", "gauge",
           "How many seconds of work has been done that is in progress.",
           [&](const controller_stats& c) {
             e.value("workqueue_unfinished_work_seconds", queue_label(c),
                     c.unfinished_work_seconds);
           });
  e.family("workqueue_longest_running_processor_seconds", "gauge",
           "How many seconds has the longest running processor for workqueue been running.",
           [&](const controller_stats& c) {
             e.value("workqueue_longest_running_processor_seconds", queue_label(c),
                     c.longest_running_seconds);
           });
  return e.take();
}

} // namespace kinformer
