#include "app/kinformerd/leader_only_handlers.hpp"

#include "actors/error_bridge.hpp"

#include <caf/all.hpp>

#include <algorithm>

namespace kinformer::service {
namespace {

struct gate_state {
  gate_state() = default; // not an aggregate (CAF would construct it from the pointer)

  static inline const char* name = "kinformerd.leader_only_handlers";

  cache_actor cache;
  leader_only_options options;
  std::vector<caf::actor> running;
  bool stopping = false;
};

using gate_pointer = caf::stateful_actor<gate_state>*;

void report(gate_pointer self, const std::string& event, const std::string& detail) {
  if (self->state.options.report)
    self->state.options.report(event, detail);
}

void start_webhooks(gate_pointer self) {
  auto& st = self->state;
  for (const auto& plan : st.options.webhooks) {
    auto spawned = spawn_webhook_handler(self->system(), plan.hook);
    if (!spawned) {
      report(self, "webhook_refused", plan.hook.name + ": " + spawned.err().message);
      continue;
    }
    auto actor = caf::actor_cast<caf::actor>(spawned->actor);
    self->monitor(actor);
    st.running.push_back(actor);
    self->request(st.cache, std::chrono::seconds(60), atoms::subscribe_atom::value, plan.kind,
                  spawned->actor, plan.subscription)
        .then([](subscription_id) {},
              [self, actor, name = plan.hook.name](caf::error& err) {
                report(self, "webhook_refused", name + ": " + from_caf_error(err).message);
                self->send_exit(actor, caf::exit_reason::user_shutdown);
              });
  }
}

void stop_webhooks(gate_pointer self) {
  for (auto& a : self->state.running)
    self->send_exit(a, caf::exit_reason::user_shutdown);
}

void on_leadership(gate_pointer self, bool leading) {
  auto& st = self->state;
  if (st.stopping || leading == st.options.leading->load())
    return;
  st.options.leading->store(leading);
  report(self, leading ? "leading" : "not_leading",
         std::to_string(leading ? st.options.webhooks.size() : st.running.size()) + " webhooks");
  if (leading)
    start_webhooks(self);
  else
    stop_webhooks(self);
}

caf::behavior gate_behavior(gate_pointer self, cache_actor cache, leader_only_options options) {
  self->state.cache = std::move(cache);
  self->state.options = std::move(options);
  self->set_down_handler([self](const caf::down_msg& down) {
    auto& running = self->state.running;
    running.erase(std::remove(running.begin(), running.end(), down.source), running.end());
    if (self->state.stopping && running.empty())
      self->quit();
  });
  // An exit stops the webhooks; the gate ends once they have drained.
  self->set_exit_handler([self](const caf::exit_msg& msg) {
    auto& st = self->state;
    st.stopping = true;
    st.options.leading->store(false);
    stop_webhooks(self);
    if (st.running.empty())
      self->quit(msg.reason);
  });
  return {[self](atoms::leading_atom, bool leading) { on_leadership(self, leading); }};
}

} // namespace

caf::actor spawn_leader_only_handlers(caf::actor_system& system, cache_actor cache,
                                      leader_only_options options) {
  return system.spawn(gate_behavior, std::move(cache), std::move(options));
}

} // namespace kinformer::service
