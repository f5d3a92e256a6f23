#pragma once
// CPU time of this process split by who spent it, read from /proc/self/task/*/stat. The
// benchmark runs the simulator, the writer and the informer in one process; only the informer's
// share (CAF workers, the HTTP client's I/O thread: every thread not named below) is its cost.

namespace kinformer::bench {

struct cpu_split {
  double writer_seconds = 0;    // the main thread: the benchmark's writer
  double simulator_seconds = 0; // threads named "kubesim-*"
  double client_seconds = 0;    // every other thread: informer, reflector, handlers, HTTP client

  cpu_split operator-(const cpu_split& earlier) const {
    return {writer_seconds - earlier.writer_seconds, simulator_seconds - earlier.simulator_seconds,
            client_seconds - earlier.client_seconds};
  }
};

// User plus system time of every live thread so far. Threads that have exited are not counted:
// sample where the threads of interest all live.
cpu_split sample_thread_cpu();

} // namespace kinformer::bench
