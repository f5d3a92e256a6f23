#include "actors/actor_system_setup.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

namespace kinformer {

void configure_actor_system(caf::actor_system_config& cfg, std::size_t threads) {
  cfg.set("scheduler.max-threads", threads);
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("logger.console", caf::atom("none"));
}

} // namespace kinformer
