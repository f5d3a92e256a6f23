#pragma once
// The CAF scheduler policy every kinformer actor system runs on: CAF 0.17's work sharing (one
// job queue; idle workers sleep on a condition variable, woken at once, no polling) with two
// changes that save context switches on the path of each watch event:
// - When an actor on a worker makes another runnable and has no message left itself, the worker
//   keeps the new job in a slot of its own and runs it next (Go's runnext, Tokio's LIFO slot).
//   An event goes reflector -> informer -> handler on one worker instead of waking the other
//   worker for every hop and sending the first back to sleep. Measured on 2 cores at 2,000
//   events/s: 3 futex calls an event instead of 12. An actor with more messages waiting (an
//   informer draining a burst) sends the job to the queue instead, where the other worker runs
//   it beside the sender: pinned behind it, a handler that does real work fell behind in bursts.
// - The sleeping worker is woken after the queue's lock is released. CAF's work_sharing
//   notifies while holding it, so the woken worker first blocks on that lock.
// What the slot costs: another worker cannot take the job in it, so the job waits for the
// current one to end, which is why actors here never block a scheduler thread (blocking work
// runs on detached actors, as the reconcile workers do) and why each resume is bounded
// (configure_actor_system sets scheduler.max-throughput). When another job is made runnable,
// the one in the slot moves to the shared queue and an idle worker is woken for it, so a
// fan-out still runs in parallel; and after `slot_run_limit` slot jobs in a row the worker turns
// to the shared queue, so two actors messaging each other cannot keep a worker from it.
// Include only where the actor system is configured: it pulls in CAF's scheduler headers.

#include <caf/policy/unprofiled.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduled_actor.hpp>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace kinformer {

class sharing_scheduler_policy : public caf::policy::unprofiled {
public:
  static constexpr std::size_t slot_run_limit = 4;

  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}
    std::deque<caf::resumable*> queue;
    std::mutex lock;
    std::condition_variable cv;
  };

  // Touched only by the worker's own thread (and by stop() once the workers have joined).
  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
    caf::resumable* slot = nullptr;
    std::size_t slot_runs = 0; // slot jobs run since the worker last took from the queue
    caf::scheduled_actor* running = nullptr; // the actor this worker runs now, if the job is one
  };

  // Cast once per run, not once per message the actor sends.
  template <class Worker>
  void before_resume(Worker* self, caf::resumable* job) {
    d(self).running = dynamic_cast<caf::scheduled_actor*>(job);
  }

  template <class Worker>
  void after_resume(Worker* self, caf::resumable*) {
    d(self).running = nullptr;
  }

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    auto& shared = d(self);
    {
      std::lock_guard guard(shared.lock);
      shared.queue.push_back(job);
    }
    shared.cv.notify_one();
  }

  // From a thread that is not a worker (an I/O thread, a scoped or detached actor).
  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    central_enqueue(self->parent(), job);
  }

  // From an actor running on this worker: into the slot, if that actor has nothing more to do
  // (what the slot held goes to the queue); else to the queue, so that another worker runs the
  // job beside it, as a handler runs beside an informer draining a burst.
  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    auto& mine = d(self);
    if (!ends_soon(mine.running)) {
      central_enqueue(self->parent(), job);
      return;
    }
    if (mine.slot != nullptr)
      central_enqueue(self->parent(), mine.slot);
    mine.slot = job;
  }

  // A job that used up its throughput goes to the back of the queue.
  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    central_enqueue(self->parent(), job);
  }

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& mine = d(self);
    auto* slotted = mine.slot;
    mine.slot = nullptr;
    if (slotted != nullptr && mine.slot_runs < slot_run_limit) {
      ++mine.slot_runs;
      return slotted;
    }
    mine.slot_runs = 0;
    auto& shared = d(self->parent());
    std::unique_lock guard(shared.lock);
    if (slotted != nullptr) // its turn is over: behind what waited in the queue
      shared.queue.push_back(slotted);
    shared.cv.wait(guard, [&] { return !shared.queue.empty(); });
    auto* job = shared.queue.front();
    shared.queue.pop_front();
    // No worker was woken for the job moved from the slot: if it still waits, wake one now.
    const bool more = slotted != nullptr && !shared.queue.empty();
    guard.unlock();
    if (more)
      shared.cv.notify_one();
    return job;
  }

  // Whether the running actor has no message left to handle after the current one: then a job
  // it makes runnable waits in the slot only for the rest of this message.
  static bool ends_soon(caf::scheduled_actor* running) {
    return running != nullptr && running->mailbox().empty();
  }

  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker* self, UnaryFunction f) {
    auto& mine = d(self);
    if (auto* slotted = mine.slot) {
      mine.slot = nullptr;
      f(slotted);
    }
  }

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    auto& shared = d(self);
    std::unique_lock guard(shared.lock);
    while (!shared.queue.empty()) {
      auto* job = shared.queue.front();
      shared.queue.pop_front();
      f(job);
    }
  }
};

} // namespace kinformer
