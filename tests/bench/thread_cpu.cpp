#include "tests/bench/thread_cpu.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace kinformer::bench {

namespace {

struct thread_sample {
  std::string name;
  double seconds = 0;
};

// /proc/self/task/TID/stat: "tid (comm) state ..." with utime and stime as fields 14 and 15.
// comm may hold spaces and parentheses, so fields are counted from its last ')'.
bool read_thread(const std::string& tid, thread_sample& out) {
  std::string path = "/proc/self/task/" + tid + "/stat";
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (!file)
    return false;
  char buffer[1024];
  std::size_t size = std::fread(buffer, 1, sizeof buffer - 1, file);
  std::fclose(file);
  buffer[size] = '\0';
  char* open = std::strchr(buffer, '(');
  char* close = std::strrchr(buffer, ')');
  if (!open || !close || close < open)
    return false;
  out.name.assign(open + 1, close);
  // After ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime(14) stime(15).
  unsigned long utime = 0, stime = 0;
  if (std::sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                  &stime) != 2)
    return false;
  out.seconds = double(utime + stime) / double(sysconf(_SC_CLK_TCK));
  return true;
}

} // namespace

cpu_split sample_thread_cpu() {
  cpu_split split;
  const std::string main_tid = std::to_string(getpid());
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks)
    return split;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.')
      continue;
    thread_sample sample;
    if (!read_thread(entry->d_name, sample))
      continue;
    if (entry->d_name == main_tid)
      split.writer_seconds += sample.seconds;
    else if (sample.name.rfind("kubesim-", 0) == 0)
      split.simulator_seconds += sample.seconds;
    else
      split.client_seconds += sample.seconds;
  }
  closedir(tasks);
  return split;
}

} // namespace kinformer::bench
