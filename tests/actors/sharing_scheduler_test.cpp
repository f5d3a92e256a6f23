// kinformer's scheduler (actors/sharing_scheduler_policy.hpp), on real actor systems: an actor
// that another actor makes runnable runs next on the same worker, unless the other has more
// messages waiting; two actors messaging each other do not keep a worker from the shared queue;
// and each actor run is bounded.

#include "actors/actor_system_setup.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

using namespace kinformer;
using namespace std::chrono_literals;

namespace {

using thread_promise = std::shared_ptr<std::promise<std::thread::id>>;

// Answers one message with the thread it ran on.
caf::behavior thread_reporter(caf::event_based_actor* self) {
  return {[self](const thread_promise& where) {
    where->set_value(std::this_thread::get_id());
    self->quit();
  }};
}

// Records its own thread, then makes `next` runnable with a message from this actor.
caf::behavior forwarder(caf::event_based_actor* self, caf::actor next) {
  return {[self, next](const thread_promise& here, const thread_promise& there) {
    here->set_value(std::this_thread::get_id());
    self->send(next, there);
    self->quit();
  }};
}

// Passes a counter back and forth with `peer` until `stop` is set.
caf::behavior volley(caf::event_based_actor* self, std::shared_ptr<std::atomic<bool>> stop) {
  return {[self, stop](caf::actor peer, int n) {
    if (!stop->load())
      self->send(peer, caf::actor_cast<caf::actor>(self), n + 1);
  }};
}

// On its first message: gives itself another, makes `helper` runnable, then waits (a bounded
// wait, standing in for work that takes a while) for the helper to have run; reports whether it
// did. The second message ends it.
caf::behavior busy_sender(caf::event_based_actor* self, caf::actor helper,
                          std::shared_ptr<std::promise<bool>> helper_ran_meanwhile) {
  return {[self, helper, helper_ran_meanwhile](const std::shared_ptr<std::promise<void>>& ran) {
            self->send(self, caf::ok_atom::value);
            self->send(helper, ran);
            helper_ran_meanwhile->set_value(ran->get_future().wait_for(60s) ==
                                            std::future_status::ready);
          },
          [self](caf::ok_atom) { self->quit(); }};
}

caf::behavior signaller(caf::event_based_actor*) {
  return {[](const std::shared_ptr<std::promise<void>>& ran) { ran->set_value(); }};
}

} // namespace

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(thread_promise)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<std::promise<void>>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<std::promise<bool>>)

TEST_CASE("an actor made runnable by an actor on a worker runs next on that worker") {
  caf::actor_system_config cfg;
  configure_actor_system(cfg, 2);
  caf::actor_system system{cfg};
  // Under CAF's own work sharing the receiver goes to the shared queue and the other worker,
  // woken for it, often takes it; here it is in the sender's worker's slot. Both actors are new
  // each round and start lazily, so the sender's message is what first makes the receiver
  // runnable (an actor still finishing its last run would take the message on its own worker).
  for (int round = 0; round < 200; ++round) {
    auto receiver = system.spawn<caf::lazy_init>(thread_reporter);
    auto sender = system.spawn<caf::lazy_init>(forwarder, receiver);
    auto here = std::make_shared<std::promise<std::thread::id>>();
    auto there = std::make_shared<std::promise<std::thread::id>>();
    auto sender_thread = here->get_future();
    auto receiver_thread = there->get_future();
    caf::anon_send(sender, here, there);
    INFO("round " << round);
    REQUIRE(receiver_thread.get() == sender_thread.get());
  }
}

TEST_CASE("an actor made runnable by an actor with messages left runs on another worker "
          "meanwhile") {
  caf::actor_system_config cfg;
  configure_actor_system(cfg, 2);
  caf::actor_system system{cfg};
  // Kept in the sender's worker's slot, the helper would wait for the sender's whole run; in the
  // queue, the other worker takes it at once. The wait is only a bound on a failure.
  auto helper = system.spawn<caf::lazy_init>(signaller);
  auto verdict = std::make_shared<std::promise<bool>>();
  auto helper_ran_meanwhile = verdict->get_future();
  auto sender = system.spawn<caf::lazy_init>(busy_sender, helper, verdict);
  auto ran = std::make_shared<std::promise<void>>();
  caf::anon_send(sender, ran);
  REQUIRE(helper_ran_meanwhile.get());
}

TEST_CASE("two actors messaging each other do not keep a worker from the shared queue") {
  caf::actor_system_config cfg;
  configure_actor_system(cfg, 1); // one worker: nothing else could take the queued job
  caf::actor_system system{cfg};
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto left = system.spawn(volley, stop);
  auto right = system.spawn(volley, stop);
  caf::anon_send(left, right, 0); // from here on each makes the other runnable, forever
  auto ran = std::make_shared<std::promise<void>>();
  auto ran_future = ran->get_future();
  auto other = system.spawn(signaller);
  caf::anon_send(other, ran);
  // Without the limit on slot runs the worker would pass the two actors back and forth through
  // its slot and never reach the queue. The wait is only a bound on a failure.
  const bool other_ran = ran_future.wait_for(60s) == std::future_status::ready;
  stop->store(true);
  REQUIRE(other_ran);
  caf::anon_send_exit(left, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(right, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(other, caf::exit_reason::user_shutdown);
}

TEST_CASE("an actor run handles at most scheduler_max_throughput messages") {
  caf::actor_system_config cfg;
  configure_actor_system(cfg, 2);
  caf::actor_system system{cfg};
  CHECK(system.scheduler().max_throughput() == scheduler_max_throughput);
}
