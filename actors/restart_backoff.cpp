#include "actors/restart_backoff.hpp"

#include <algorithm>

namespace kinformer {

std::chrono::milliseconds restart_backoff::on_failure(std::chrono::milliseconds uptime) {
  const auto floor = std::max(config_.initial, std::chrono::milliseconds{0});
  const auto cap = std::max(config_.cap, floor);
  if (last_.count() == 0 || uptime >= config_.reset_after)
    last_ = floor;
  else
    last_ = last_ > cap / 2 ? cap : last_ * 2; // never doubles past the cap: no overflow
  return last_;
}

} // namespace kinformer
