#include "actors/foreign_thread_scope.hpp"

#include <caf/logger.hpp>

namespace kinformer {

foreign_thread_scope::foreign_thread_scope() : held_(caf::logger::current_logger() != nullptr) {}

foreign_thread_scope::~foreign_thread_scope() {
  if (!held_)
    caf::logger::set_current_actor_system(nullptr);
}

} // namespace kinformer
