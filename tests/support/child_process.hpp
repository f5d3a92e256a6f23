// A program run as a child process by a test: stdout read line by line, stderr collected and
// searchable as it arrives, the exit status as a future. Killed and reaped on destruction
// whatever happened, and killed by the kernel if the test process dies.
//
// Synchronisation: a reader thread per pipe and a waiter thread for the exit, all signalling one
// condition variable; no sleeps.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace kinformer::testing {

class child_process {
public:
  using clock = std::chrono::steady_clock;

  explicit child_process(std::vector<std::string> argv) : name_(argv.at(0)) {
    int out[2], err[2];
    // Close-on-exec, so that other children never inherit a write end and keep a pipe open.
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    std::vector<char*> args;
    for (auto& a : argv)
      args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // Only async-signal-safe calls in the child.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent)
        ::_exit(127);
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      ::execv(args[0], args.data());
      const char message[] = "exec failed\n";
      [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
      ::_exit(127);
    }
    const int fork_error = errno;
    ::close(out[1]);
    ::close(err[1]);
    if (pid_ < 0) {
      ::close(out[0]);
      ::close(err[0]);
      FAIL("cannot start " << name_ << ": " << std::strerror(fork_error));
    }
    exit_status_ = exit_promise_.get_future().share();
    stdout_reader_ = std::thread([this, fd = out[0]] { read_stdout(fd); });
    stderr_reader_ = std::thread([this, fd = err[0]] { read_stderr(fd); });
    waiter_ = std::thread([this] { wait_for_exit(); });
  }

  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  ~child_process() {
    // The waiter leaves the child a zombie until it is reaped here, so its pid cannot be reused
    // by another process while it may still be signalled.
    if (exit_status_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ::kill(pid_, SIGTERM);
      if (exit_status_.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        WARN(name_ << " ignored SIGTERM for 5 s: killed");
        ::kill(pid_, SIGKILL);
      }
    }
    waiter_.join();
    int ignored = 0;
    ::waitpid(pid_, &ignored, 0);
    stdout_reader_.join();
    stderr_reader_.join();
  }

  // The next stdout line (without its newline); nullopt at end of stream or after `timeout`.
  std::optional<std::string> next_line(clock::duration timeout) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return !lines_.empty() || stdout_closed_; }))
      return std::nullopt;
    if (lines_.empty())
      return std::nullopt;
    std::string line = std::move(lines_.front());
    lines_.pop_front();
    return line;
  }

  // Every remaining stdout line, once stdout has closed (the process exited); nullopt after
  // `timeout`.
  std::optional<std::string> all_stdout(clock::duration timeout) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return stdout_closed_; }))
      return std::nullopt;
    std::string text;
    for (auto& line : lines_)
      text.append(line).push_back('\n');
    lines_.clear();
    return text;
  }

  // True once stderr contains `needle`; false if it has not after `timeout` or stderr closed.
  bool wait_stderr_contains(std::string_view needle, clock::duration timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout,
                      [&] { return stderr_.find(needle) != std::string::npos || stderr_closed_; });
    return stderr_.find(needle) != std::string::npos;
  }

  // Everything written to stderr so far; complete once the process has exited.
  std::string stderr_text() {
    std::unique_lock lock(mutex_);
    if (exit_status_.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      changed_.wait_for(lock, std::chrono::seconds(5), [&] { return stderr_closed_; });
    return stderr_;
  }

  // The exit code (128 + N when killed by signal N); nullopt if still running after `timeout`.
  std::optional<int> wait_exit(clock::duration timeout) {
    if (exit_status_.wait_for(timeout) != std::future_status::ready)
      return std::nullopt;
    return exit_status_.get();
  }

  void terminate() { ::kill(pid_, SIGTERM); }
  // SIGKILL: the process dies at once, with no chance to clean up (a crash, an OOM kill).
  void kill_now() { ::kill(pid_, SIGKILL); }

private:
  // Reads `fd` to its end, handing each chunk to `consume` under the lock.
  template <typename Consume>
  void drain(int fd, Consume consume) {
    char buffer[8192];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
      if (n < 0) {
        if (errno == EINTR)
          continue;
        break;
      }
      std::lock_guard lock(mutex_);
      consume(std::string_view(buffer, static_cast<std::size_t>(n)));
      changed_.notify_all();
    }
    ::close(fd);
  }

  void read_stdout(int fd) {
    std::string partial;
    drain(fd, [&](std::string_view chunk) {
      partial.append(chunk);
      for (std::size_t newline; (newline = partial.find('\n')) != std::string::npos;) {
        lines_.push_back(partial.substr(0, newline));
        partial.erase(0, newline + 1);
      }
    });
    std::lock_guard lock(mutex_);
    if (!partial.empty())
      lines_.push_back(partial);
    stdout_closed_ = true;
    changed_.notify_all();
  }

  void read_stderr(int fd) {
    drain(fd, [&](std::string_view chunk) { stderr_.append(chunk); });
    std::lock_guard lock(mutex_);
    stderr_closed_ = true;
    changed_.notify_all();
  }

  void wait_for_exit() {
    siginfo_t info{};
    // WNOWAIT: learn about the exit without reaping; the destructor reaps.
    while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0)
      if (errno != EINTR) {
        exit_promise_.set_value(-1);
        return;
      }
    exit_promise_.set_value(info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status);
  }

  std::string name_;
  pid_t pid_ = -1;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> lines_;
  bool stdout_closed_ = false;
  std::string stderr_;
  bool stderr_closed_ = false;
  std::promise<int> exit_promise_;
  std::shared_future<int> exit_status_;
  std::thread stdout_reader_, stderr_reader_, waiter_;
};

} // namespace kinformer::testing
