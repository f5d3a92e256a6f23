// raw_watch_counter: one watch on a loopback API server, its events counted without parsing (a
// line of the chunked body is an event): the fastest reader a server can have, so what it counts
// is the server's own ceiling. The side-by-side benchmark runs it beside the clients it compares,
// on the same bursts, and paces the churn by its progress file, as it does theirs.
//
//   raw_watch_counter --url http://127.0.0.1:PORT/api/v1/pods?watch=1&resourceVersion=RV
//                     [--events N] [--idle S] [--timeout S] [--progress FILE]
//
// Progress: "STATE EVENTS LAST_EVENT_WALL_US" in FILE (connecting, ready, done, failed), replaced
// by rename; LAST_EVENT_WALL_US is the wall clock, in microseconds, of the read that brought the
// last event. SIGUSR2 ends the count. Ask for no bookmarks: every line is counted. The result is
// one JSON line on stdout. Exit: 0, or 4 when fewer than N events came; 2 usage; 3 failure.

#include "tests/bench/raw_http.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

namespace {

using namespace kinformer::bench;
using steady = std::chrono::steady_clock;

struct settings {
  std::uint16_t port = 0;
  std::string target;
  std::uint64_t events = 0;
  std::uint64_t idle_seconds = 10;
  std::uint64_t timeout_seconds = 600;
  std::string progress;
};

volatile std::sig_atomic_t stop_requested = 0;
void request_stop(int) {
  stop_requested = 1;
}

// "http://127.0.0.1:PORT/target" or "http://localhost:PORT/target" into `out`; else what is
// wrong, as CLI11 wants it from a check.
std::string parse_url(std::string_view url, settings& out) {
  const std::string wrong = "not a loopback URL http://127.0.0.1:PORT/PATH: " + std::string(url);
  for (std::string_view prefix : {"http://127.0.0.1:", "http://localhost:"}) {
    if (!url.starts_with(prefix))
      continue;
    url.remove_prefix(prefix.size());
    auto slash = url.find('/');
    if (slash == std::string_view::npos)
      return wrong;
    auto [end, ec] = std::from_chars(url.data(), url.data() + slash, out.port);
    if (ec != std::errc() || end != url.data() + slash || out.port == 0)
      return wrong;
    out.target = std::string(url.substr(slash));
    return {};
  }
  return wrong;
}

// The command line, as the project's programs read theirs (CLI11). Exit code: 0 for --help,
// 2 for bad input.
std::optional<int> parse_arguments(int argc, char** argv, settings& out) {
  CLI::App app("One watch on a loopback API server, its events counted without parsing.",
               "raw_watch_counter");
  app.add_option("--url", "a watch request: "
                          "http://127.0.0.1:PORT/api/v1/pods?watch=1&resourceVersion=RV")
      ->required()
      ->check([&out](const std::string& url) { return parse_url(url, out); });
  app.add_option("--events", out.events,
                 "stop after N events (0: until SIGUSR2, --idle, or the stream's end)");
  app.add_option("--idle", out.idle_seconds, "end the count after S seconds without an event")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{86400}))
      ->capture_default_str();
  app.add_option("--timeout", out.timeout_seconds,
                 "fail when the stream is not open after S seconds")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{86400}))
      ->capture_default_str();
  app.add_option("--progress", out.progress,
                 "write \"STATE EVENTS LAST_EVENT_WALL_US\" to FILE for the driver");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return 2;
  }
  return std::nullopt;
}

std::int64_t wall_microseconds() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The driver's view of the count, written whole by rename so it never reads half a line.
class progress_file {
public:
  explicit progress_file(std::string path) : path_(std::move(path)) {}

  void write(std::string_view state, std::uint64_t events, std::int64_t last_event_us) {
    if (path_.empty() || (state == state_ && events == events_))
      return;
    state_ = std::string(state);
    events_ = events;
    std::string temporary = path_ + ".tmp";
    {
      std::ofstream out(temporary, std::ios::trunc);
      out << state << ' ' << events << ' ' << last_event_us << '\n';
    }
    std::rename(temporary.c_str(), path_.c_str());
  }

private:
  std::string path_;
  std::string state_;
  std::uint64_t events_ = ~std::uint64_t{0};
};

struct count_figures {
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
  steady::time_point first{}, last{};
  std::int64_t last_wall_us = 0;
};

int fail(progress_file& progress, const count_figures& count, const std::string& message) {
  progress.write("failed", count.events, count.last_wall_us);
  std::cerr << "raw_watch_counter: " << message << "\n";
  return 3;
}

} // namespace

int main(int argc, char** argv) {
  settings s;
  if (auto exit_code = parse_arguments(argc, argv, s))
    return *exit_code;
  struct sigaction on_usr2 {};
  on_usr2.sa_handler = request_stop;
  sigaction(SIGUSR2, &on_usr2, nullptr); // no SA_RESTART: a waiting poll() returns at once

  progress_file progress(s.progress);
  count_figures count;
  progress.write("connecting", 0, 0);
  auto connection = raw_http_connection::connect(s.port);
  if (!connection)
    return fail(progress, count, connection.err().describe());
  if (auto sent = connection->send_get(s.target); !sent)
    return fail(progress, count, sent.err().describe());
  // A loopback server that accepted the connection answers a watch's head at once; the
  // timeout bounds a server that never does.
  auto head = connection->read_head();
  if (!head)
    return fail(progress, count, head.err().describe());
  if (head->code != 200 || !head->chunked)
    return fail(progress, count,
                "the watch was answered with HTTP " + std::to_string(head->code) +
                    (head->chunked ? "" : ", not chunked"));
  progress.write("ready", 0, 0);

  const auto opened = steady::now();
  bool ended = false;
  while (!stop_requested && (s.events == 0 || count.events < s.events)) {
    auto counts = connection->read_lines(std::chrono::milliseconds(50));
    if (!counts)
      return fail(progress, count, counts.err().describe());
    auto now = steady::now();
    if (counts->lines > count.events) {
      if (count.events == 0)
        count.first = now;
      count.last = now;
      count.last_wall_us = wall_microseconds();
      count.events = counts->lines;
    }
    count.bytes = counts->bytes;
    if (counts->ended) {
      ended = true;
      break;
    }
    auto quiet_since = count.events > 0 ? count.last : opened;
    auto quiet_limit = count.events > 0 ? s.idle_seconds : s.timeout_seconds;
    if (now - quiet_since > std::chrono::seconds(quiet_limit)) {
      std::cerr << "raw_watch_counter: no event for " << quiet_limit << " s after " << count.events
                << " of " << s.events << "\n";
      break;
    }
    progress.write("ready", count.events, count.last_wall_us);
  }
  progress.write("done", count.events, count.last_wall_us);

  const bool complete = s.events == 0 || count.events >= s.events;
  const double span = std::chrono::duration<double>(count.last - count.first).count();
  std::cout << "{\"client\":\"raw\",\"events\":" << count.events << ",\"bytes\":" << count.bytes
            << ",\"events_complete\":" << (complete ? "true" : "false")
            << ",\"stream_ended\":" << (ended ? "true" : "false") << ",\"events_seconds\":" << span
            << ",\"events_per_second\":";
  // N events span N-1 intervals: first to N-th.
  if (count.events > 1 && span > 0)
    std::cout << double(count.events - 1) / span;
  else
    std::cout << "null";
  std::cout << "}\n";
  return complete ? 0 : 4;
}
