#include "actors/actor_system_setup.hpp"

#include "actors/sharing_scheduler_policy.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/scheduler/coordinator.hpp>

namespace kinformer {

void configure_actor_system(caf::actor_system_config& cfg, std::size_t threads) {
  cfg.set("scheduler.max-threads", threads);
  // CAF lets an actor take its whole mailbox in one run; a job waiting in its worker's slot
  // (sharing_scheduler_policy.hpp) would wait for all of it.
  cfg.set("scheduler.max-throughput", scheduler_max_throughput);
  cfg.set("logger.console", caf::atom("none"));
  cfg.module_factories.push_back([](caf::actor_system& system) -> caf::actor_system::module* {
    return new caf::scheduler::coordinator<sharing_scheduler_policy>(system);
  });
}

} // namespace kinformer
