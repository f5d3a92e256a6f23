#pragma once
// Controllers' metrics under controller-runtime's names, as Prometheus text exposition (format
// 0.0.4), for whatever HTTP server a program already has (no Prometheus library needed):
//   controller_runtime_reconcile_total{controller,result},
//   controller_runtime_reconcile_errors_total, controller_runtime_reconcile_time_seconds
//   (histogram), controller_runtime_active_workers, controller_runtime_max_concurrent_reconciles,
//   and client-go's workqueue_* series (depth, adds, retries, queue and work duration, unfinished
//   work, longest running processor) labelled name=<controller>.

#include "actors/controller/controller_stats.hpp"

#include <string>
#include <vector>

namespace kinformer {

std::string prometheus_text(const std::vector<controller_stats>& controllers);

} // namespace kinformer
