// Controllers' stats as Prometheus text under controller-runtime's and client-go's names.

#include "actors/controller/controller_metrics.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <sstream>

using namespace kinformer;

namespace {

controller_stats sample_stats() {
  controller_stats s;
  s.name = "config-map";
  s.workers = 4;
  s.busy_workers = 1;
  s.reconciles_succeeded = 10;
  s.reconciles_failed = 2;
  s.reconciles_requeued = 3;
  s.reconciles_requeued_after = 1;
  s.reconcile_seconds.observe(0.003);
  s.reconcile_seconds.observe(0.2);
  s.reconcile_seconds.observe(100);
  s.queue.adds = 17;
  s.queue.retries = 5;
  s.queue.work_seconds.observe(0.0005);
  s.queue_depth = 6;
  s.unfinished_work_seconds = 1.5;
  s.longest_running_seconds = 0.75;
  return s;
}

// Every sample line as "name{labels}" -> value; every family must have HELP and TYPE first.
std::map<std::string, std::string> samples(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  std::string typed;
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    if (line.rfind("# TYPE ", 0) == 0) {
      typed = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0)
      continue;
    auto space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    auto series = line.substr(0, space);
    CHECK(series.rfind(typed, 0) == 0); // under its family's TYPE
    CHECK(series.back() == '}');
    out[series] = line.substr(space + 1);
  }
  return out;
}

} // namespace

TEST_CASE("controller metrics: reconciles by result, workers and the work queue, as "
          "controller-runtime names them") {
  auto s = samples(prometheus_text({sample_stats()}));
  const std::string c = "controller=\"config-map\"";
  CHECK(s.at("controller_runtime_reconcile_total{" + c + ",result=\"success\"}") == "10");
  CHECK(s.at("controller_runtime_reconcile_total{" + c + ",result=\"error\"}") == "2");
  CHECK(s.at("controller_runtime_reconcile_total{" + c + ",result=\"requeue\"}") == "3");
  CHECK(s.at("controller_runtime_reconcile_total{" + c + ",result=\"requeue_after\"}") == "1");
  CHECK(s.at("controller_runtime_reconcile_errors_total{" + c + "}") == "2");
  CHECK(s.at("controller_runtime_active_workers{" + c + "}") == "1");
  CHECK(s.at("controller_runtime_max_concurrent_reconciles{" + c + "}") == "4");
  // Buckets are cumulative, +Inf holds every observation.
  CHECK(s.at("controller_runtime_reconcile_time_seconds_bucket{" + c + ",le=\"0.005\"}") == "1");
  CHECK(s.at("controller_runtime_reconcile_time_seconds_bucket{" + c + ",le=\"0.25\"}") == "2");
  CHECK(s.at("controller_runtime_reconcile_time_seconds_bucket{" + c + ",le=\"60\"}") == "2");
  CHECK(s.at("controller_runtime_reconcile_time_seconds_bucket{" + c + ",le=\"+Inf\"}") == "3");
  CHECK(s.at("controller_runtime_reconcile_time_seconds_count{" + c + "}") == "3");
  CHECK(std::stod(s.at("controller_runtime_reconcile_time_seconds_sum{" + c + "}")) ==
        Approx(100.203));

  const std::string q = "name=\"config-map\"";
  CHECK(s.at("workqueue_depth{" + q + "}") == "6");
  CHECK(s.at("workqueue_adds_total{" + q + "}") == "17");
  CHECK(s.at("workqueue_retries_total{" + q + "}") == "5");
  CHECK(s.at("workqueue_work_duration_seconds_count{" + q + "}") == "1");
  CHECK(s.at("workqueue_work_duration_seconds_bucket{" + q + ",le=\"0.001\"}") == "1");
  CHECK(s.at("workqueue_queue_duration_seconds_count{" + q + "}") == "0");
  CHECK(s.at("workqueue_unfinished_work_seconds{" + q + "}") == "1.5");
  CHECK(s.at("workqueue_longest_running_processor_seconds{" + q + "}") == "0.75");
}

TEST_CASE("controller metrics: several controllers share each family, label values are "
          "escaped") {
  auto a = sample_stats();
  auto b = sample_stats();
  b.name = "odd \"name\"\\";
  auto text = prometheus_text({a, b});
  auto s = samples(text);
  CHECK(s.count("workqueue_depth{name=\"config-map\"}") == 1);
  CHECK(s.count(R"(workqueue_depth{name="odd \"name\"\\"})") == 1);
  // One HELP and one TYPE per family, however many controllers.
  std::size_t types = 0;
  for (auto at = text.find("# TYPE workqueue_depth "); at != std::string::npos;
       at = text.find("# TYPE workqueue_depth ", at + 1))
    ++types;
  CHECK(types == 1);
  CHECK(prometheus_text({}).find("# TYPE controller_runtime_reconcile_total counter") !=
        std::string::npos);
}
