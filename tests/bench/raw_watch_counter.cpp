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

constexpr const char* usage =
    "usage: raw_watch_counter --url URL [--events N] [--idle S] [--timeout S] [--progress FILE]\n"
    "  --url URL        a watch request on loopback: "
    "http://127.0.0.1:PORT/api/v1/pods?watch=1&resourceVersion=RV\n"
    "  --events N       stop after N events (0: until SIGUSR2, --idle, or the stream's end)\n"
    "  --idle S         end the count after S seconds without an event (10)\n"
    "  --timeout S      fail when the stream is not open after S seconds (600)\n"
    "  --progress FILE  write \"STATE EVENTS LAST_EVENT_WALL_US\" to FILE for the driver\n";

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

template <class Number>
bool parse_number(std::string_view text, Number& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "http://127.0.0.1:PORT/target" or "http://localhost:PORT/target".
bool parse_url(std::string_view url, settings& out) {
  for (std::string_view prefix : {"http://127.0.0.1:", "http://localhost:"}) {
    if (!url.starts_with(prefix))
      continue;
    url.remove_prefix(prefix.size());
    auto slash = url.find('/');
    if (slash == std::string_view::npos || !parse_number(url.substr(0, slash), out.port) ||
        out.port == 0)
      return false;
    out.target = std::string(url.substr(slash));
    return true;
  }
  return false;
}

// Empty on success, else what is wrong.
std::optional<std::string> parse_arguments(int argc, char** argv, settings& out) {
  bool have_url = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h")
      return std::string();
    if (i + 1 >= argc)
      return std::string(flag) + " needs a value";
    std::string_view value = argv[++i];
    bool good = true;
    if (flag == "--url")
      good = have_url = parse_url(value, out);
    else if (flag == "--events")
      good = parse_number(value, out.events);
    else if (flag == "--idle")
      good = parse_number(value, out.idle_seconds) && out.idle_seconds > 0;
    else if (flag == "--timeout")
      good = parse_number(value, out.timeout_seconds) && out.timeout_seconds > 0;
    else if (flag == "--progress")
      out.progress = std::string(value);
    else
      return "unknown option " + std::string(flag);
    if (!good)
      return "bad value for " + std::string(flag) + ": " + std::string(value);
  }
  if (!have_url)
    return std::string("--url is required");
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
  if (auto problem = parse_arguments(argc, argv, s)) {
    if (problem->empty()) {
      std::cout << usage;
      return 0;
    }
    std::cerr << "raw_watch_counter: " << *problem << "\n" << usage;
    return 2;
  }
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
