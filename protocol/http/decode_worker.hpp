#pragma once
// A thread that decodes list bodies off the HTTP client's I/O thread.
//
// Decoding a list (validating every item, reading its metadata, building the objects) costs
// more than receiving it: in a 100,000-pod sync it took 0.51 s of the I/O thread's 0.53, while
// the CAF workers used 0.1 s. Here the I/O thread only receives, and this thread decodes what
// it received meanwhile, so the two overlap on two cores.
//
// Jobs run one at a time, in the order they were posted; one that throws is abandoned (the
// others still run), as a detached coroutine's exception is on the I/O thread. Each job counts the
// bytes it carries, and a poster can wait until the bytes queued fall under a bound: a list the
// decoder cannot keep up with is never held whole.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace kinformer {

class decode_worker {
public:
  decode_worker();
  // Runs every job already posted, then stops the thread.
  ~decode_worker();
  decode_worker(const decode_worker&) = delete;
  decode_worker& operator=(const decode_worker&) = delete;

  // Queues `job`, which carries `bytes` (released once it has run).
  void post(std::function<void()> job, std::size_t bytes = 0);
  // Blocks until the bytes queued (and running) are at most `bound`.
  void wait_until_at_most(std::size_t bound);
  // True on this worker's thread (where a blocking call into the client would deadlock).
  bool is_current() const noexcept { return std::this_thread::get_id() == thread_.get_id(); }

private:
  void run();

  struct queued {
    std::function<void()> job;
    std::size_t bytes = 0;
  };
  std::mutex mutex_;
  std::condition_variable work_;    // a job came, or stop
  std::condition_variable drained_; // queued bytes fell
  std::deque<queued> jobs_;
  std::size_t bytes_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace kinformer
