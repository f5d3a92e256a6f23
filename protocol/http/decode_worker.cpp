#include "protocol/http/decode_worker.hpp"

#include <pthread.h>

namespace kinformer {

decode_worker::decode_worker() : thread_([this] { run(); }) {}

decode_worker::~decode_worker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void decode_worker::post(std::function<void()> job, std::size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back({std::move(job), bytes});
    bytes_ += bytes;
  }
  work_.notify_one();
}

void decode_worker::wait_until_at_most(std::size_t bound) {
  std::unique_lock lock(mutex_);
  drained_.wait(lock, [&] { return bytes_ <= bound; });
}

void decode_worker::run() {
  pthread_setname_np(pthread_self(), "kinformer-list"); // at most 15 characters
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty())
      return; // stopping, and every job has run
    queued next = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    try {
      next.job();
    } catch (...) { // a callback's failure must not stop the lists after it
    }
    next.job = nullptr; // what the job held goes before the bytes are released
    lock.lock();
    bytes_ -= next.bytes;
    drained_.notify_all();
  }
}

} // namespace kinformer
