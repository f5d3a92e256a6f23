#include "protocol/http/api_client.hpp"
#include "tests/protocol/support/connect_proxy.hpp"
#include "tests/protocol/support/scripted_server.hpp"
#include "tests/protocol/support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <sstream>

using namespace kinformer;
using namespace std::chrono_literals;
using kinformer::test::received_request;
using kinformer::test::scripted_server;
using kinformer::test::server_exchange;
using kinformer::test::temp_dir;

namespace {

// Upper bound for waits that should finish in milliseconds; only reached when a test fails.
constexpr auto patience = 20s;

std::string pod_json(const std::string& name, const std::string& rv,
                     const std::string& greeting = "hi") {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","resourceVersion":")" + rv + R"(","labels":{"greeting":")" +
         greeting + R"("}}})";
}

std::string event_line(const std::string& type, const std::string& object_json) {
  return R"({"type":")" + type + R"(","object":)" + object_json + "}\n";
}

std::string pod_list(const std::vector<std::string>& names, const std::string& rv,
                     const std::string& continue_token) {
  std::string items;
  for (const auto& name : names)
    items += (items.empty() ? "" : ",") + pod_json(name, "1");
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"(","continue":")" + continue_token + R"("},"items":[)" + items + "]}";
}

std::string status_json(int code, const std::string& reason, const std::string& details = "") {
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"m","reason":")" +
         reason + R"(","code":)" + std::to_string(code) +
         (details.empty() ? "" : R"(,"details":)" + details) + "}";
}

std::unique_ptr<api_client> make_client(connection_config config, client_options options = {}) {
  auto client = api_client::create(config, options);
  if (!client.ok())
    FAIL(client.err().describe());
  return std::move(*client);
}

std::unique_ptr<api_client> make_client(const std::string& url) {
  return make_client(*from_server_url(url));
}

struct list_outcome {
  std::optional<result<list_page>> page;
  response_info info;
};

list_outcome list_sync(api_client& client, const list_request& request) {
  std::promise<list_outcome> done;
  client.list(request, [&](result<list_page> page, const response_info& info) {
    done.set_value(list_outcome{std::move(page), info});
  });
  auto future = done.get_future();
  REQUIRE(future.wait_for(patience) == std::future_status::ready);
  return future.get();
}

// Records what a watch delivers; waits are bounded by `patience`.
class watch_log {
public:
  watch_callbacks callbacks() {
    return {[this](watch_event&& e) {
              std::lock_guard lock(mutex_);
              events_.push_back(std::move(e));
              changed_.notify_all();
            },
            [this](const watch_closed_info& c) {
              std::lock_guard lock(mutex_);
              closed_ = c;
              ++closed_calls_;
              changed_.notify_all();
            },
            {}};
  }
  bool wait_events(std::size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, patience, [&] { return events_.size() >= n || closed_; });
    return events_.size() >= n;
  }
  watch_closed_info wait_closed() {
    std::unique_lock lock(mutex_);
    REQUIRE(changed_.wait_for(lock, patience, [&] { return closed_.has_value(); }));
    return *closed_;
  }
  std::vector<watch_event> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }
  int closed_calls() {
    std::lock_guard lock(mutex_);
    return closed_calls_;
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<watch_event> events_;
  std::optional<watch_closed_info> closed_;
  int closed_calls_ = 0;
};

// Holds server handlers until the test opens it. Declare the gate before the server (handlers
// take its future) and an opener after it, so a failing test still releases the handlers
// before the server joins their threads.
class gate {
public:
  gate() : future_(promise_.get_future().share()) {}
  ~gate() { open(); }
  void open() {
    std::call_once(once_, [&] { promise_.set_value(); });
  }
  std::shared_future<void> future() const { return future_; }

  struct opener {
    gate& g;
    ~opener() { g.open(); }
  };

private:
  std::promise<void> promise_;
  std::shared_future<void> future_;
  std::once_flag once_;
};

std::string name_of(const watch_event& e) {
  return e.object ? std::string(e.object->meta().name) : std::string();
}

} // namespace

TEST_CASE("list builds the query string and follows continue tokens") {
  std::mutex mutex;
  std::vector<received_request> seen;
  scripted_server server([&](server_exchange& ex) {
    {
      std::lock_guard lock(mutex);
      seen.push_back(ex.request());
    }
    const auto token = ex.request().query("continue");
    if (!token)
      ex.respond(200, pod_list({"a", "b"}, "100", "c1/next"));
    else if (*token == "c1/next")
      ex.respond(200, pod_list({"c"}, "101", ""));
    else
      ex.respond(410, status_json(410, "Expired"));
  });
  auto client = make_client(server.url());

  list_request request;
  request.path = "/api/v1/pods";
  request.label_selector = "app=web,tier in (a,b)";
  request.field_selector = "status.phase!=Failed";
  request.resource_version = "0";
  request.limit = 2;
  CHECK(client->list_target(request) ==
        "/api/v1/pods?labelSelector=app%3Dweb%2Ctier%20in%20%28a%2Cb%29"
        "&fieldSelector=status.phase%21%3DFailed&resourceVersion=0&limit=2");

  std::vector<std::string> names;
  std::string rv;
  for (;;) {
    auto outcome = list_sync(*client, request);
    REQUIRE(outcome.page->ok());
    CHECK(outcome.info.http_status == 200);
    const auto& page = outcome.page->value();
    for (const auto& item : page.items)
      names.emplace_back(item->meta().name);
    rv = page.resource_version;
    if (page.continue_token.empty())
      break;
    request.continue_token = page.continue_token;
  }
  CHECK(names == std::vector<std::string>{"a", "b", "c"});
  CHECK(rv == "101");
  std::lock_guard lock(mutex);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].path() == "/api/v1/pods");
  CHECK(seen[0].query("labelSelector") == "app=web,tier in (a,b)");
  CHECK(seen[0].query("fieldSelector") == "status.phase!=Failed");
  CHECK(seen[0].query("limit") == "2");
  CHECK(seen[0].query("resourceVersion") == "0");
  CHECK_FALSE(seen[0].query("continue"));
  CHECK(seen[1].query("continue") == "c1/next");
  CHECK(seen[0].accept == "application/json");
  // Both pages went over one kept-alive connection.
  CHECK(server.connection_count() == 1);
}

TEST_CASE("metadata-only lists ask for PartialObjectMetadataList") {
  std::promise<std::string> accept;
  scripted_server server([&](server_exchange& ex) {
    accept.set_value(ex.request().accept);
    ex.respond(200, R"({"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",)"
                    R"("metadata":{"resourceVersion":"5"},"items":[]})");
  });
  auto client = make_client(server.url());
  list_request request;
  request.path = "/api/v1/pods";
  request.metadata_only = true;
  auto outcome = list_sync(*client, request);
  REQUIRE(outcome.page->ok());
  CHECK(outcome.page->value().kind == "PartialObjectMetadataList");
  CHECK(accept.get_future().get() ==
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json");
}

TEST_CASE("list failures carry the HTTP code, the decoded Status and Retry-After") {
  scripted_server server([&](server_exchange& ex) {
    const auto path = ex.request().path();
    if (path == "/expired")
      ex.respond(410, status_json(410, "Expired"));
    else if (path == "/throttled")
      ex.respond(429, status_json(429, "TooManyRequests"), {{"Retry-After", "7"}});
    else if (path == "/busy")
      ex.respond(500, status_json(500, "InternalError", R"({"retryAfterSeconds":3})"));
    else if (path == "/too-large-rv")
      ex.respond(504,
                 status_json(504, "Timeout", R"({"causes":[{"type":"ResourceVersionTooLarge"}]})"));
    else if (path == "/plain-error")
      ex.respond(502, "bad gateway");
    else if (path == "/status-in-200")
      ex.respond(200, status_json(410, "Gone"));
    else
      ex.respond(200, "{not json");
  });
  auto client = make_client(server.url());
  const auto run = [&](const char* path) {
    list_request request;
    request.path = path;
    return list_sync(*client, request);
  };

  auto expired = run("/expired");
  REQUIRE_FALSE(expired.page->ok());
  CHECK(expired.page->err().code == errc::status);
  CHECK(expired.info.http_status == 410);
  REQUIRE(expired.info.server_status);
  CHECK(expired.info.server_status->is_expired());

  auto throttled = run("/throttled");
  CHECK(throttled.info.http_status == 429);
  CHECK(throttled.info.retry_after_seconds == 7);
  CHECK(throttled.info.server_status->reason == "TooManyRequests");

  auto busy = run("/busy");
  CHECK(busy.info.http_status == 500);
  CHECK(busy.info.retry_after_seconds == 3);

  auto too_large = run("/too-large-rv");
  CHECK(too_large.info.http_status == 504);
  REQUIRE(too_large.info.server_status);
  CHECK(too_large.info.server_status->is_too_large_resource_version());

  auto plain = run("/plain-error");
  CHECK(plain.page->err().code == errc::status);
  CHECK_THAT(plain.page->err().message, Catch::Contains("HTTP 502: bad gateway"));
  CHECK_FALSE(plain.info.server_status);

  auto in_200 = run("/status-in-200");
  CHECK(in_200.page->err().code == errc::status);
  REQUIRE(in_200.info.server_status);
  CHECK(in_200.info.server_status->reason == "Gone");

  auto garbage = run("/garbage");
  CHECK(garbage.page->err().code == errc::invalid_json);
}

// A Retry-After HTTP-date `ahead` of the wall clock, as an API server would send it.
std::string http_date_from_now(std::chrono::seconds ahead) {
  const std::time_t when = std::chrono::system_clock::to_time_t(
      std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()) + ahead);
  std::tm utc{};
  gmtime_r(&when, &utc);
  char text[64];
  REQUIRE(std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc) > 0);
  return text;
}

TEST_CASE("Retry-After as an HTTP-date, capped, and garbage falling back to the Status") {
  scripted_server server([&](server_exchange& ex) {
    const auto path = ex.request().path();
    const auto throttled = status_json(429, "TooManyRequests", R"({"retryAfterSeconds":4})");
    if (path == "/in-two-minutes")
      ex.respond(429, throttled, {{"Retry-After", http_date_from_now(120s)}});
    else if (path == "/in-the-past")
      ex.respond(429, throttled, {{"Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"}});
    else if (path == "/in-a-week")
      ex.respond(429, throttled, {{"Retry-After", "604800"}});
    else if (path == "/garbage")
      ex.respond(429, throttled, {{"Retry-After", "tomorrow-ish"}});
    else
      ex.respond(429, status_json(429, "TooManyRequests", R"({"retryAfterSeconds":999999})"));
  });
  auto client = make_client(server.url());
  const auto retry_after = [&](const char* path) {
    list_request request;
    request.path = path;
    auto outcome = list_sync(*client, request);
    CHECK(outcome.info.http_status == 429);
    return outcome.info.retry_after_seconds;
  };
  const auto two_minutes = retry_after("/in-two-minutes");
  REQUIRE(two_minutes);
  // The date has whole seconds; the client reads it up to a few seconds later.
  CHECK(*two_minutes <= 120);
  CHECK(*two_minutes >= 110);
  CHECK(retry_after("/in-the-past") == 0);
  CHECK(retry_after("/in-a-week") == 3600);
  CHECK(retry_after("/garbage") == 4);
  // details.retryAfterSeconds is capped too, also in the Status handed on.
  list_request status_only;
  status_only.path = "/status-only";
  auto capped = list_sync(*client, status_only);
  CHECK(capped.info.retry_after_seconds == 3600);
  REQUIRE(capped.info.server_status);
  CHECK(capped.info.server_status->retry_after_seconds == 3600);
}

// Collects what the request observer sees; the client calls it on its I/O thread.
class request_log {
public:
  request_observer observer() {
    return [this](const request_record& record) {
      std::lock_guard lock(mutex_);
      records_.push_back(record);
    };
  }
  std::vector<request_record> records() {
    std::lock_guard lock(mutex_);
    return records_;
  }

private:
  std::mutex mutex_;
  std::vector<request_record> records_;
};

TEST_CASE("the request observer sees each list, watch and get once, with verb and code") {
  scripted_server server([&](server_exchange& ex) {
    if (ex.request().query("watch")) {
      ex.start_chunked();
      ex.chunk(event_line("ADDED", pod_json("p1", "2")));
      ex.end_chunked();
    } else if (ex.request().path() == "/api/v1/pods") {
      ex.respond(200, pod_list({"a"}, "1", ""));
    } else {
      ex.respond(404, status_json(404, "NotFound"));
    }
  });
  request_log log;
  client_options options;
  options.on_request = log.observer();
  auto client = make_client(*from_server_url(server.url()), options);

  // Each request is observed before its result is handed over, so no further wait is needed.
  list_request list;
  list.path = "/api/v1/pods";
  REQUIRE(list_sync(*client, list).page->ok());
  watch_log events;
  watch_request watch;
  watch.path = "/api/v1/pods";
  client->watch(watch, events.callbacks());
  CHECK(events.wait_closed().reason == watch_close_reason::end_of_stream);
  auto missing = client->get_sync("/api/v1/namespaces/default/pods/missing");
  REQUIRE(missing.ok());
  CHECK(missing->status_code == 404);

  const auto records = log.records();
  REQUIRE(records.size() == 3);
  CHECK(records[0].verb == api_verb::list);
  CHECK(records[0].http_status == 200);
  CHECK(records[1].verb == api_verb::watch);
  CHECK(records[1].http_status == 200);
  CHECK(records[2].verb == api_verb::get);
  CHECK(records[2].http_status == 404);
  for (const auto& record : records) {
    CHECK(record.duration > std::chrono::steady_clock::duration::zero());
    CHECK(record.duration < patience);
  }
  CHECK(std::string(to_string(api_verb::list)) == "list");
  CHECK(std::string(to_string(api_verb::watch)) == "watch");
  CHECK(std::string(to_string(api_verb::get)) == "get");
}

TEST_CASE("the request observer reports code 0 when no response arrived") {
  unsigned short closed_port = 0;
  {
    scripted_server gone([](server_exchange&) {});
    closed_port = gone.port();
  }
  request_log log;
  client_options options;
  options.on_request = log.observer();
  auto client =
      make_client(*from_server_url("http://127.0.0.1:" + std::to_string(closed_port)), options);
  list_request list;
  list.path = "/api/v1/pods";
  REQUIRE_FALSE(list_sync(*client, list).page->ok());
  watch_log events;
  watch_request watch;
  watch.path = "/api/v1/pods";
  client->watch(watch, events.callbacks());
  CHECK(events.wait_closed().reason == watch_close_reason::io_error);

  const auto records = log.records();
  REQUIRE(records.size() == 2);
  CHECK(records[0].verb == api_verb::list);
  CHECK(records[0].http_status == 0);
  CHECK(records[1].verb == api_verb::watch);
  CHECK(records[1].http_status == 0);
}

TEST_CASE("broken responses and unreachable servers are errors, not crashes") {
  scripted_server server([&](server_exchange& ex) {
    const auto path = ex.request().path();
    if (path == "/truncated") {
      ex.write_raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"kind\":");
      ex.drop();
    } else if (path == "/garbage") {
      ex.write_raw("this is not HTTP\r\n\r\n");
      ex.drop();
    } else {
      ex.drop();
    }
  });
  auto client = make_client(server.url());
  for (const char* path : {"/truncated", "/garbage", "/dropped"}) {
    INFO(path);
    list_request request;
    request.path = path;
    auto outcome = list_sync(*client, request);
    REQUIRE_FALSE(outcome.page->ok());
    CHECK(outcome.page->err().code == errc::io);
    CHECK(outcome.info.http_status == 0);
    // Told apart by the socket's error code, which the reflector's retry decision reads.
    if (std::string_view(path) != "/garbage")
      CHECK(outcome.info.transport == transport_failure::reset);
  }

  unsigned short closed_port = 0;
  {
    scripted_server gone([](server_exchange&) {});
    closed_port = gone.port();
  }
  auto refused = make_client("http://127.0.0.1:" + std::to_string(closed_port));
  list_request request;
  request.path = "/api/v1/pods";
  auto outcome = list_sync(*refused, request);
  REQUIRE_FALSE(outcome.page->ok());
  CHECK(outcome.page->err().code == errc::io);
  CHECK(outcome.info.transport == transport_failure::refused);
  watch_log log;
  watch_request watch;
  watch.path = "/api/v1/pods";
  refused->watch(watch, log.callbacks());
  auto closed = log.wait_closed();
  CHECK(closed.reason == watch_close_reason::io_error);
  CHECK(closed.response.transport == transport_failure::refused);
}

TEST_CASE("a small body limit fails a list whose items are larger as too_large") {
  scripted_server server([&](server_exchange& ex) {
    ex.respond(200, pod_list({"a", "b"}, "1", ""));
  });
  client_options options;
  options.max_body_bytes = 64;
  auto client = make_client(*from_server_url(server.url()), options);
  list_request request;
  request.path = "/api/v1/pods";
  auto outcome = list_sync(*client, request);
  REQUIRE_FALSE(outcome.page->ok());
  CHECK(outcome.page->err().code == errc::too_large);
}

TEST_CASE("a kept-alive connection closed by the server is replaced transparently") {
  scripted_server server([&](server_exchange& ex) {
    ex.respond(200, pod_list({"a"}, "1", ""));
    ex.drop(); // the client still believes the connection is reusable
  });
  auto client = make_client(server.url());
  list_request request;
  request.path = "/api/v1/pods";
  for (int i = 0; i < 3; ++i) {
    auto outcome = list_sync(*client, request);
    REQUIRE(outcome.page->ok());
  }
  CHECK(server.request_count() == 3);
}

TEST_CASE("a chunked watch is split into lines whatever the chunk boundaries") {
  // Multi-byte UTF-8 in the payload, so some boundaries fall inside a character.
  const std::string stream =
      event_line("ADDED", pod_json("p1", "11", "h\xC3\xA9llo \xE2\x9C\x93")) +
      event_line("MODIFIED", pod_json("p2", "12", "\xF0\x9F\x9A\x80")) +
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",)"
      R"("metadata":{"resourceVersion":"13"}}})"
      "\n" +
      event_line("DELETED", pod_json("p1", "14"));

  std::promise<received_request> seen;
  const auto chunk_sizes = GENERATE(as<std::string>{}, "one-byte", "random", "whole");
  scripted_server server([&](server_exchange& ex) {
    seen.set_value(ex.request());
    ex.start_chunked();
    std::mt19937 rng(42);
    std::size_t at = 0;
    while (at < stream.size()) {
      std::size_t n = chunk_sizes == "one-byte" ? 1
                      : chunk_sizes == "random" ? 1 + rng() % 40
                                                : stream.size();
      n = std::min(n, stream.size() - at);
      ex.chunk(std::string_view(stream).substr(at, n));
      at += n;
    }
    ex.end_chunked();
  });
  auto client = make_client(server.url());
  watch_request request;
  request.path = "/api/v1/namespaces/default/pods";
  request.resource_version = "10";
  request.timeout_seconds = 300;
  CHECK(client->watch_target(request) == "/api/v1/namespaces/default/pods?watch=1"
                                         "&resourceVersion=10&allowWatchBookmarks=true"
                                         "&timeoutSeconds=300");
  watch_log log;
  auto handle = client->watch(request, log.callbacks());
  CHECK(handle.id() != 0);
  const auto closed = log.wait_closed();
  CHECK(closed.reason == watch_close_reason::end_of_stream);
  CHECK(closed.events_delivered == 4);
  const auto events = log.events();
  REQUIRE(events.size() == 4);
  CHECK(events[0].type == event_type::added);
  CHECK(events[0].object->meta().label("greeting") == "h\xC3\xA9llo \xE2\x9C\x93");
  CHECK(events[1].type == event_type::modified);
  CHECK(events[1].object->meta().label("greeting") == "\xF0\x9F\x9A\x80");
  CHECK(events[2].type == event_type::bookmark);
  CHECK(events[2].object->meta().resource_version == "13");
  CHECK(events[3].type == event_type::deleted);
  CHECK(name_of(events[3]) == "p1");
  CHECK(handle.bytes_received() >= stream.size());
  CHECK(handle.closed());
  const auto request_seen = seen.get_future().get();
  CHECK(request_seen.query("watch") == "1");
  CHECK(request_seen.query("allowWatchBookmarks") == "true");
  CHECK(request_seen.query("resourceVersion") == "10");
  CHECK(request_seen.accept == "application/json");
}

TEST_CASE("metadata-only watches ask for PartialObjectMetadata") {
  std::promise<std::string> accept;
  scripted_server server([&](server_exchange& ex) {
    accept.set_value(ex.request().accept);
    ex.start_chunked();
    ex.end_chunked();
  });
  auto client = make_client(server.url());
  watch_log log;
  watch_request request;
  request.path = "/api/v1/pods";
  request.metadata_only = true;
  client->watch(request, log.callbacks());
  CHECK(log.wait_closed().reason == watch_close_reason::end_of_stream);
  CHECK(accept.get_future().get() ==
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");
}

TEST_CASE("watch close reasons: too long line, drop, decode error, HTTP error, ERROR event") {
  gate first_delivered;
  scripted_server server([&, delivered = first_delivered.future()](server_exchange& ex) {
    const auto path = ex.request().path();
    if (path == "/long") {
      ex.start_chunked();
      ex.chunk(event_line("ADDED", pod_json("ok", "1")));
      delivered.wait(); // keeps the two chunks in separate reads
      ex.chunk(event_line("ADDED", pod_json(std::string(300, 'x'), "2")));
      ex.end_chunked();
    } else if (path == "/drop") {
      ex.start_chunked();
      const auto line = event_line("ADDED", pod_json("p", "1"));
      ex.chunk(line + line.substr(0, 20));
      ex.drop();
    } else if (path == "/bad-line") {
      ex.start_chunked();
      ex.chunk("{\"type\": \"ADDED\", \"object\": [1,2]}\n");
      ex.end_chunked();
    } else if (path == "/gone") {
      ex.respond(410, status_json(410, "Expired"), {{"Retry-After", "2"}});
    } else if (path == "/error-event") {
      ex.start_chunked();
      ex.chunk(R"({"type":"ERROR","object":)" + status_json(410, "Expired") + "}\n");
      ex.end_chunked();
    }
  });
  gate::opener release{first_delivered};
  auto client = make_client(server.url());
  const auto run = [&](const char* path, std::vector<watch_event>& events) {
    watch_log log;
    watch_request request;
    request.path = path;
    request.max_line_bytes = 200;
    client->watch(request, log.callbacks());
    if (std::string_view(path) == "/long") {
      REQUIRE(log.wait_events(1));
      first_delivered.open();
    }
    auto closed = log.wait_closed();
    events = log.events();
    CHECK(log.closed_calls() == 1);
    return closed;
  };
  std::vector<watch_event> events;

  auto long_line = run("/long", events);
  CHECK(long_line.reason == watch_close_reason::line_too_large);
  CHECK(events.size() == 1);

  auto dropped = run("/drop", events);
  CHECK(dropped.reason == watch_close_reason::io_error);
  CHECK(events.size() == 1);

  auto bad = run("/bad-line", events);
  CHECK(bad.reason == watch_close_reason::decode_error);
  CHECK(events.empty());

  auto gone = run("/gone", events);
  CHECK(gone.reason == watch_close_reason::http_error);
  CHECK(gone.response.http_status == 410);
  REQUIRE(gone.response.server_status);
  CHECK(gone.response.server_status->is_expired());
  CHECK(gone.response.retry_after_seconds == 2);

  auto error_event = run("/error-event", events);
  CHECK(error_event.reason == watch_close_reason::end_of_stream);
  REQUIRE(events.size() == 1);
  CHECK(events[0].type == event_type::error);
  REQUIRE(events[0].error);
  CHECK(events[0].error->code == 410);
}

TEST_CASE("watch credit: zero credit stops delivery, add_credit resumes it") {
  gate finish;
  scripted_server server([&, done = finish.future()](server_exchange& ex) {
    if (ex.request().path() == "/ping") {
      ex.respond(200, "{}");
      return;
    }
    ex.start_chunked();
    ex.chunk(event_line("ADDED", pod_json("p1", "1")) + event_line("ADDED", pod_json("p2", "2")) +
             event_line("ADDED", pod_json("p3", "3")));
    done.wait();
    ex.end_chunked();
  });
  gate::opener release{finish};
  auto client = make_client(server.url());
  watch_log log;
  watch_request request;
  request.path = "/api/v1/pods";
  request.initial_credit = 1;
  auto handle = client->watch(request, log.callbacks());
  REQUIRE(log.wait_events(1));
  // A round trip through the I/O thread: any further delivery would have happened by now.
  REQUIRE(client->get_sync("/ping").ok());
  CHECK(log.events().size() == 1);
  CHECK(handle.bytes_received() > 0);
  CHECK(handle.last_activity().time_since_epoch().count() > 0);

  handle.add_credit(1);
  REQUIRE(log.wait_events(2));
  REQUIRE(client->get_sync("/ping").ok());
  CHECK(log.events().size() == 2);

  handle.add_credit(10);
  REQUIRE(log.wait_events(3));
  finish.open();
  const auto closed = log.wait_closed();
  CHECK(closed.reason == watch_close_reason::end_of_stream);
  CHECK(closed.events_delivered == 3);
  const auto events = log.events();
  CHECK(name_of(events[0]) == "p1");
  CHECK(name_of(events[1]) == "p2");
  CHECK(name_of(events[2]) == "p3");
}

TEST_CASE("cancel stops a watch, streaming or paused, with one cancelled close") {
  gate finish;
  scripted_server server([&, done = finish.future()](server_exchange& ex) {
    if (ex.request().path() == "/ping") {
      ex.respond(200, "{}");
      return;
    }
    ex.start_chunked();
    ex.chunk(event_line("ADDED", pod_json("p1", "1")) + event_line("ADDED", pod_json("p2", "2")));
    done.wait();
  });
  gate::opener release{finish};
  auto client = make_client(server.url());
  const auto initial_credit = GENERATE(as<std::size_t>{}, unlimited_credit, 1);
  watch_log log;
  watch_request request;
  request.path = "/api/v1/pods";
  request.initial_credit = initial_credit;
  auto handle = client->watch(request, log.callbacks());
  REQUIRE(log.wait_events(1));
  if (initial_credit == unlimited_credit)
    REQUIRE(log.wait_events(2));
  handle.cancel();
  const auto closed = log.wait_closed();
  CHECK(closed.reason == watch_close_reason::cancelled);
  CHECK(log.closed_calls() == 1);
  handle.cancel(); // again: nothing happens
  handle.add_credit(5);
  REQUIRE(client->get_sync("/ping").ok()); // a round trip through the I/O thread
  CHECK(log.closed_calls() == 1);
  CHECK(log.events().size() == (initial_credit == 1 ? 1u : 2u));
}

TEST_CASE("an idle watch closes with idle_timeout") {
  gate finish;
  scripted_server server([&, done = finish.future()](server_exchange& ex) {
    ex.start_chunked();
    ex.chunk(event_line("ADDED", pod_json("p1", "1")));
    done.wait();
  });
  gate::opener release{finish};
  auto client = make_client(server.url());
  watch_log log;
  watch_request request;
  request.path = "/api/v1/pods";
  request.idle_timeout = 150ms;
  client->watch(request, log.callbacks());
  const auto closed = log.wait_closed();
  CHECK(closed.reason == watch_close_reason::idle_timeout);
  CHECK(closed.events_delivered == 1);
}

TEST_CASE("destroying the client cancels watches and lists in flight") {
  gate finish;
  std::promise<void> list_arrived;
  scripted_server server([&, done = finish.future()](server_exchange& ex) {
    if (ex.request().path() == "/watch") {
      ex.start_chunked();
      ex.chunk(event_line("ADDED", pod_json("p1", "1")));
    } else {
      list_arrived.set_value();
    }
    done.wait(); // the list never gets an answer
  });
  gate::opener release{finish};
  watch_log log;
  std::promise<list_outcome> listed;
  {
    auto client = make_client(server.url());
    watch_request request;
    request.path = "/watch";
    auto handle = client->watch(request, log.callbacks());
    REQUIRE(log.wait_events(1));
    list_request list;
    list.path = "/list";
    client->list(list, [&](result<list_page> page, const response_info& info) {
      listed.set_value(list_outcome{std::move(page), info});
    });
    // Make sure the list request is on the wire before shutting down.
    REQUIRE(list_arrived.get_future().wait_for(patience) == std::future_status::ready);
    client.reset();
    CHECK(log.closed_calls() == 1);
    handle.cancel(); // the client is gone: a no-op
  }
  CHECK(log.wait_closed().reason == watch_close_reason::cancelled);
  auto outcome = listed.get_future().get();
  REQUIRE_FALSE(outcome.page->ok());
  CHECK(outcome.page->err().code == errc::cancelled);
}

TEST_CASE("a rotated token file is picked up on 401") {
  temp_dir dir;
  const auto token_file = dir.write("token", "tok-1\n");
  std::mutex mutex;
  std::string valid_token = "Bearer tok-1";
  std::vector<std::string> authorizations;
  scripted_server server([&](server_exchange& ex) {
    std::lock_guard lock(mutex);
    authorizations.push_back(ex.request().authorization);
    if (ex.request().authorization == valid_token)
      ex.respond(200, "{}");
    else
      ex.respond(401, status_json(401, "Unauthorized"));
  });
  auto config = *from_server_url(server.url());
  config.token_file = token_file;
  request_log requests;
  client_options options;
  options.on_request = requests.observer();
  auto client = make_client(config, options);

  auto first = client->get_sync("/api");
  REQUIRE(first.ok());
  CHECK(first->status_code == 200);

  dir.write("token", "tok-2\n");
  // Make sure the modification time moves even on coarse-grained file systems.
  std::filesystem::last_write_time(token_file, std::filesystem::last_write_time(token_file) + 10s);
  {
    std::lock_guard lock(mutex);
    valid_token = "Bearer tok-2";
  }
  auto second = client->get_sync("/api");
  REQUIRE(second.ok());
  CHECK(second->status_code == 200);
  // The retry with the rotated token is a request of its own.
  std::vector<int> codes;
  for (const auto& record : requests.records())
    codes.push_back(record.http_status);
  CHECK(codes == std::vector<int>{200, 401, 200});
  std::lock_guard lock(mutex);
  CHECK(authorizations == std::vector<std::string>{"Bearer tok-1", "Bearer tok-1", "Bearer tok-2"});
}

TEST_CASE("an exec plugin's token is sent, kept, and fetched again after a 401") {
  temp_dir dir;
  dir.write("token", "tok-1");
  // The plugin prints whatever the token file holds, and counts its runs.
  const auto plugin = dir.write(
      "plugin.sh",
      "#!/bin/sh\necho run >> \"" + dir.file("runs") +
          "\"\n"
          "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
          "\"status\":{\"token\":\"%s\"}}' \"$(cat \"" +
          dir.file("token") + "\")\"\n");
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  auto runs = [&] {
    std::ifstream in(dir.file("runs"));
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  };
  std::mutex mutex;
  std::string valid_token = "Bearer tok-1";
  std::vector<std::string> authorizations;
  scripted_server server([&](server_exchange& ex) {
    std::lock_guard lock(mutex);
    authorizations.push_back(ex.request().authorization);
    ex.respond(ex.request().authorization == valid_token ? 200 : 401,
               ex.request().authorization == valid_token ? "{}" : status_json(401, "Unauthorized"));
  });
  auto config = *from_server_url(server.url());
  config.exec = exec_config{};
  config.exec->api_version = "client.authentication.k8s.io/v1";
  config.exec->command = plugin;
  config.exec->interactive_mode = exec_interactive_mode::never;
  auto client = make_client(config);

  for (int i = 0; i < 2; ++i) {
    auto reply = client->get_sync("/api");
    REQUIRE(reply.ok());
    CHECK(reply->status_code == 200);
  }
  CHECK(runs() == 1); // no expiry: kept until the server refuses it

  dir.write("token", "tok-2");
  {
    std::lock_guard lock(mutex);
    valid_token = "Bearer tok-2";
  }
  auto after_rotation = client->get_sync("/api");
  REQUIRE(after_rotation.ok());
  CHECK(after_rotation->status_code == 200);
  CHECK(runs() == 2);
  std::lock_guard lock(mutex);
  CHECK(authorizations ==
        std::vector<std::string>{"Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-2"});
}

TEST_CASE("a failing exec plugin fails the request with errc::credentials") {
  scripted_server server([](server_exchange& ex) { ex.respond(200, "{}"); });
  auto config = *from_server_url(server.url());
  config.exec = exec_config{};
  config.exec->api_version = "client.authentication.k8s.io/v1";
  config.exec->command = "false";
  auto client = make_client(config);
  auto reply = client->get_sync("/api");
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.err().code == errc::credentials);
  CHECK_THAT(reply.err().message, Catch::Contains("exited with status 1"));
}

TEST_CASE("the token file is re-read after the recheck interval") {
  temp_dir dir;
  const auto token_file = dir.write("token", "tok-1");
  std::promise<std::string> second_auth;
  int calls = 0;
  scripted_server server([&](server_exchange& ex) {
    if (++calls == 2)
      second_auth.set_value(ex.request().authorization);
    ex.respond(200, "{}");
  });
  auto config = *from_server_url(server.url());
  config.token_file = token_file;
  client_options options;
  options.token_recheck_interval = 0ms;
  auto client = make_client(config, options);
  REQUIRE(client->get_sync("/a").ok());
  dir.write("token", "tok-2");
  std::filesystem::last_write_time(token_file, std::filesystem::last_write_time(token_file) + 10s);
  REQUIRE(client->get_sync("/a").ok());
  CHECK(second_auth.get_future().get() == "Bearer tok-2");
}

namespace {

// A test CA, a server certificate for 127.0.0.1 and localhost, and an unrelated CA.
struct test_pki {
  temp_dir dir;
  bool ok = false;

  test_pki() {
    const std::string d = dir.path().string();
    dir.write("san.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string quiet = " >/dev/null 2>&1";
    const std::string cmds[] = {
        "openssl req -x509" + ec + " -keyout " + d + "/ca.key -out " + d +
            "/ca.crt -days 2 -subj /CN=kinformer-test-ca" + quiet,
        "openssl req -x509" + ec + " -keyout " + d + "/other-ca.key -out " + d +
            "/other-ca.crt -days 2 -subj /CN=someone-else" + quiet,
        "openssl req" + ec + " -keyout " + d + "/server.key -out " + d +
            "/server.csr -subj /CN=kinformer-test-server" + quiet,
        "openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.crt -CAkey " + d +
            "/ca.key -CAcreateserial -out " + d + "/server.crt -days 2 -extfile " + d + "/san.ext" +
            quiet,
    };
    ok = true;
    for (const auto& cmd : cmds)
      ok = ok && std::system(cmd.c_str()) == 0;
  }
  std::string file(const char* name) const { return dir.file(name); }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

TEST_CASE("TLS: verification with the right CA, failure with the wrong one") {
  test_pki pki;
  REQUIRE(pki.ok);
  scripted_server server([](server_exchange& ex) { ex.respond(200, R"({"kind":"APIVersions"})"); },
                         test::server_tls_files{pki.file("server.crt"), pki.file("server.key")});
  REQUIRE(server.url().starts_with("https://127.0.0.1:"));
  const auto base = *from_server_url(server.url());

  SECTION("CA file") {
    auto config = base;
    config.ca_file = pki.file("ca.crt");
    auto response = make_client(config)->get_sync("/api");
    REQUIRE(response.ok());
    CHECK(response->status_code == 200);
    CHECK(response->body == R"({"kind":"APIVersions"})");
  }
  SECTION("CA data, host name verified through tls_server_name") {
    auto config = base;
    config.ca_data = read_all(pki.file("ca.crt"));
    config.tls_server_name = "localhost";
    auto response = make_client(config)->get_sync("/api");
    REQUIRE(response.ok());
  }
  SECTION("wrong CA") {
    auto config = base;
    config.ca_file = pki.file("other-ca.crt");
    auto response = make_client(config)->get_sync("/api");
    REQUIRE_FALSE(response.ok());
    CHECK(response.err().code == errc::tls);
    CHECK_THAT(response.err().message, Catch::Contains("certificate verification"));
  }
  SECTION("name mismatch") {
    auto config = base;
    config.ca_file = pki.file("ca.crt");
    config.tls_server_name = "not-the-server.example";
    auto response = make_client(config)->get_sync("/api");
    REQUIRE_FALSE(response.ok());
    CHECK(response.err().code == errc::tls);
  }
  SECTION("insecure skip verify") {
    auto config = base;
    config.ca_file = pki.file("other-ca.crt");
    config.insecure_skip_tls_verify = true;
    REQUIRE(make_client(config)->get_sync("/api").ok());
  }
  SECTION("a watch over TLS fails with tls_error on a wrong CA") {
    auto config = base;
    config.ca_file = pki.file("other-ca.crt");
    auto client = make_client(config);
    watch_log log;
    watch_request request;
    request.path = "/api/v1/pods";
    client->watch(request, log.callbacks());
    CHECK(log.wait_closed().reason == watch_close_reason::tls_error);
  }
  SECTION("bad TLS material is reported at creation") {
    auto config = base;
    config.ca_file = pki.file("missing.crt");
    auto created = api_client::create(config);
    REQUIRE_FALSE(created.ok());
    CHECK(created.err().code == errc::tls);
    CHECK_THAT(created.err().message, Catch::Contains("missing.crt"));
  }
}

TEST_CASE("TLS: a CA file that changes is reloaded (CA rotation)") {
  test_pki pki;
  REQUIRE(pki.ok);
  scripted_server server([](server_exchange& ex) { ex.respond(200, "{}"); },
                         test::server_tls_files{pki.file("server.crt"), pki.file("server.key")});
  temp_dir dir;
  // The client trusts only the old CA: the server's certificate is from the new one.
  const auto ca_file = dir.write("ca.crt", read_all(pki.file("other-ca.crt")));
  auto config = *from_server_url(server.url());
  config.ca_file = ca_file;
  auto client = make_client(config); // the default recheck interval: a minute
  auto refused = client->get_sync("/api");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().code == errc::tls);

  // The bundle is rotated in place: the failed handshake made the client look again.
  dir.write("ca.crt", read_all(pki.file("ca.crt")));
  std::filesystem::last_write_time(ca_file, std::filesystem::last_write_time(ca_file) + 10s);
  auto accepted = client->get_sync("/api");
  INFO((accepted ? "" : accepted.err().describe()));
  REQUIRE(accepted.ok());
  CHECK(accepted->status_code == 200);
}

TEST_CASE("through an HTTP proxy: a CONNECT tunnel, TLS to the server inside it") {
  test_pki pki;
  REQUIRE(pki.ok);
  scripted_server server([](server_exchange& ex) { ex.respond(200, R"({"kind":"APIVersions"})"); },
                         test::server_tls_files{pki.file("server.crt"), pki.file("server.key")});
  auto config = *from_server_url(server.url());
  config.ca_file = pki.file("ca.crt");
  const std::string server_authority = server.url().substr(std::string("https://").size());

  SECTION("an open proxy") {
    test::connect_proxy proxy;
    config.proxy_url = proxy.url();
    auto client = make_client(config);
    auto response = client->get_sync("/api");
    INFO((response ? "" : response.err().describe()));
    REQUIRE(response.ok());
    CHECK(response->body == R"({"kind":"APIVersions"})");
    watch_log log; // a watch opens its own tunnel
    watch_request request;
    request.path = "/api/v1/pods";
    client->watch(request, log.callbacks());
    CHECK(log.wait_closed().reason != watch_close_reason::tls_error);
    REQUIRE(proxy.targets().size() >= 2);
    CHECK(proxy.targets().front() == server_authority);
  }
  SECTION("a proxy that wants credentials: given in the URL, or refused with its status") {
    test::connect_proxy proxy("Basic dXNlcjpwYXNz"); // user:pass
    config.proxy_url = "http://user:pass@" + proxy.url().substr(7);
    REQUIRE(make_client(config)->get_sync("/api").ok());
    config.proxy_url = proxy.url();
    auto refused = make_client(config)->get_sync("/api");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.err().message, Catch::Contains("refused the tunnel") &&
                                          Catch::Contains("407 Proxy Authentication Required"));
  }
  SECTION("a proxy URL kinformer cannot use is an error at creation") {
    config.proxy_url = "socks5://127.0.0.1:1080";
    auto created = api_client::create(config);
    REQUIRE_FALSE(created.ok());
    CHECK_THAT(created.err().message, Catch::Contains("only http:// proxies"));
  }
}

TEST_CASE("a watch streams over TLS") {
  test_pki pki;
  REQUIRE(pki.ok);
  scripted_server server(
      [](server_exchange& ex) {
        ex.start_chunked();
        const auto line = event_line("ADDED", pod_json("tls-pod", "1"));
        ex.chunk(line.substr(0, 10));
        ex.chunk(line.substr(10));
        ex.end_chunked();
      },
      test::server_tls_files{pki.file("server.crt"), pki.file("server.key")});
  auto config = *from_server_url(server.url());
  config.ca_file = pki.file("ca.crt");
  auto client = make_client(config);
  watch_log log;
  watch_request request;
  request.path = "/api/v1/pods";
  client->watch(request, log.callbacks());
  CHECK(log.wait_closed().reason == watch_close_reason::end_of_stream);
  REQUIRE(log.events().size() == 1);
  CHECK(name_of(log.events()[0]) == "tls-pod");
}

TEST_CASE("get_sync returns non-2xx answers as responses and rejects bad URLs at creation") {
  scripted_server server(
      [](server_exchange& ex) { ex.respond(404, status_json(404, "NotFound")); });
  auto client = make_client(server.url());
  auto response = client->get_sync("/apis/nope");
  REQUIRE(response.ok());
  CHECK(response->status_code == 404);
  CHECK(response->content_type == "application/json");

  connection_config bad;
  bad.server = "ftp://nowhere";
  auto created = api_client::create(bad);
  REQUIRE_FALSE(created.ok());
  CHECK(created.err().code == errc::invalid_argument);
}

TEST_CASE("a list's items are decoded as the body arrives and can be handed on in batches") {
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i)
    names.push_back("p" + std::to_string(i));
  const std::string body = pod_list(names, "9", "");
  scripted_server server([&](server_exchange& ex) { ex.respond(200, body); });
  auto client = make_client(server.url());
  list_request request;
  request.path = "/api/v1/pods";
  std::vector<std::size_t> batches; // on the decode thread, before the list's callback
  std::size_t items = 0;
  request.on_items = [&](std::vector<object_ptr>&& batch) {
    batches.push_back(batch.size());
    items += batch.size();
  };
  SECTION("a batch per socket read") {
    request.on_items_batch = 1;
    auto outcome = list_sync(*client, request);
    REQUIRE(outcome.page->ok());
    CHECK((*outcome.page)->items.empty()); // every item went out through on_items
    CHECK((*outcome.page)->resource_version == "9");
    CHECK(items == names.size());
    CHECK(batches.size() > 1); // the body (over 256 KB) was read, and handed on, in pieces
  }
  SECTION("batches of at least on_items_batch, the rest in the page") {
    // How many batches form depends on the socket's reads; at least one does (3000 > 500).
    request.on_items_batch = 500;
    auto outcome = list_sync(*client, request);
    REQUIRE(outcome.page->ok());
    CHECK((*outcome.page)->items.size() < 500);
    CHECK(items + (*outcome.page)->items.size() == names.size());
    REQUIRE_FALSE(batches.empty());
    for (auto n : batches)
      CHECK(n >= 500);
  }
}

TEST_CASE("on_continue gives a page's continue token as soon as its items begin") {
  std::promise<std::string> token_seen;
  auto seen = token_seen.get_future().share();
  std::atomic<bool> before_end{false};
  scripted_server server([&](server_exchange& ex) {
    if (!ex.request().query("limit")) { // the last page: no token
      ex.respond(200, pod_list({"c"}, "9", ""));
      return;
    }
    const std::string body = pod_list({"a", "b"}, "9", "c1");
    const std::size_t split = body.find(R"({"kind":"Pod")"); // after "items":[
    ex.start_chunked();
    ex.chunk(body.substr(0, split));
    // The rest waits until the token was handed on (or 10 s).
    before_end = seen.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    ex.chunk(body.substr(split));
    ex.end_chunked();
  });
  auto client = make_client(server.url());
  list_request request;
  request.path = "/api/v1/pods";
  request.limit = 2;
  std::atomic<int> calls{0};
  request.on_continue = [&](const std::string& token) {
    if (++calls == 1)
      token_seen.set_value(token);
  };
  auto outcome = list_sync(*client, request);
  REQUIRE(outcome.page->ok());
  CHECK(before_end);
  CHECK(seen.get() == "c1");
  CHECK(calls == 1);
  CHECK((*outcome.page)->continue_token == "c1");
  CHECK((*outcome.page)->items.size() == 2);

  // The last page has no token: on_continue is not called.
  request.limit = 0;
  auto last = list_sync(*client, request);
  REQUIRE(last.page->ok());
  CHECK(calls == 1);
  CHECK((*last.page)->continue_token.empty());
}

TEST_CASE("on_events hands a watch's events on a read at a time, in order, then closes") {
  scripted_server server([&](server_exchange& ex) {
    ex.start_chunked();
    std::string burst; // one chunk: many events arrive in one read
    for (int i = 0; i < 50; ++i)
      burst += event_line("ADDED", pod_json("p" + std::to_string(i), std::to_string(i + 2)));
    ex.chunk(burst);
    ex.chunk(event_line("ADDED", "not json"));
    ex.end_chunked();
  });
  auto client = make_client(server.url());
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> names;
  std::size_t batches = 0;
  std::optional<watch_closed_info> closed;
  watch_callbacks callbacks;
  callbacks.on_events = [&](std::vector<watch_event>&& events) {
    std::lock_guard lock(mutex);
    ++batches;
    for (auto& e : events)
      names.emplace_back(e.object->meta().name);
  };
  callbacks.on_closed = [&](const watch_closed_info& info) {
    std::lock_guard lock(mutex);
    closed = info;
    changed.notify_all();
  };
  watch_request watch;
  watch.path = "/api/v1/pods";
  client->watch(watch, std::move(callbacks));
  std::unique_lock lock(mutex);
  REQUIRE(changed.wait_for(lock, patience, [&] { return closed.has_value(); }));
  // Every good event arrived, in order, before the close the bad line caused.
  REQUIRE(names.size() == 50);
  CHECK(names.front() == "p0");
  CHECK(names.back() == "p49");
  CHECK(batches < names.size());
  CHECK(closed->reason == watch_close_reason::decode_error);
  CHECK(closed->events_delivered == 50);
}
