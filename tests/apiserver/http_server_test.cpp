// The service's HTTP server alone, driven by raw sockets and Beast's synchronous client: routing,
// keep-alive, asynchronous answers, bearer tokens, malformed requests, chunked streams (client
// gone, overflow of a slow client, graceful stop) and IPv6.

#include "app/apiserver/http_server.hpp"
#include "app/kubesim/self_signed_cert.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <future>
#include <sys/socket.h>
#include <sys/time.h>
#include <thread>
#include <unistd.h>

#include <cerrno>

using namespace kinformer;
using namespace kinformer::apiserver;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// A blocking client on one connection.
class client {
public:
  explicit client(std::uint16_t port, const char* host = "127.0.0.1") : socket_(ioc_) {
    socket_.connect(tcp::endpoint(net::ip::make_address(host), port));
  }

  http::response<http::string_body> get(const std::string& target, const std::string& token = "",
                                        http::verb verb = http::verb::get) {
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "test");
    if (!token.empty())
      request.set(http::field::authorization, "Bearer " + token);
    request.prepare_payload();
    http::write(socket_, request);
    return read_response();
  }

  http::response<http::string_body> read_response() {
    http::response<http::string_body> response;
    http::read(socket_, buffer_, response);
    return response;
  }

  void send_raw(std::string_view bytes) { net::write(socket_, net::buffer(bytes)); }

  // Everything until the server closes the connection.
  std::string read_to_end() {
    std::string out = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    char chunk[65536];
    for (;;) {
      beast::error_code ec;
      std::size_t n = socket_.read_some(net::buffer(chunk), ec);
      out.append(chunk, n);
      if (ec)
        return out;
    }
  }

  // Reads and drops whatever arrives until the server closes the connection (true), or until
  // nothing arrives for `quiet` (false).
  bool closed_by_server(std::chrono::seconds quiet) {
    timeval tv{static_cast<time_t>(quiet.count()), 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char chunk[65536];
    while (true) {
      const ssize_t n = ::recv(socket_.native_handle(), chunk, sizeof chunk, 0);
      if (n == 0)
        return true;
      if (n < 0)
        return errno != EAGAIN && errno != EWOULDBLOCK; // a reset is closed too
    }
  }

  void close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

private:
  net::io_context ioc_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

std::string status_reason(const std::string& body) {
  auto value = boost::json::parse(body);
  REQUIRE(value.at("kind") == "Status");
  return std::string(value.at("reason").as_string());
}

http_server_options listening_on(std::string address) {
  http_server_options options;
  options.listen = std::move(address);
  return options;
}

http_response text(std::string body) {
  http_response response;
  response.content_type = "text/plain";
  response.body = std::move(body);
  return response;
}

// A server on loopback with a few plain routes; tests add their own before start().
struct server_fixture {
  http_server server;

  explicit server_fixture(http_server_options options = {}) : server(std::move(options)) {
    server.add_route("/", [](const http_request& r, std::shared_ptr<http_exchange> x) {
      x->respond(text("root " + r.method + " " + r.target));
    });
    server.add_route("/api", [](const http_request& r, std::shared_ptr<http_exchange> x) {
      x->respond(text("api " + r.path));
    });
  }
  ~server_fixture() { server.stop(); }

  void start() {
    auto started = server.start();
    INFO((started ? std::string() : started.err().describe()));
    REQUIRE(started.ok());
  }
};

} // namespace

TEST_CASE("http_server: routes by longest prefix, keeps the connection alive") {
  server_fixture f;
  f.start();
  CHECK(f.server.local_endpoint() == "127.0.0.1:" + std::to_string(f.server.port()));
  client c(f.server.port());
  auto first = c.get("/api/v1/pods?watch=1");
  CHECK(first.result_int() == 200);
  CHECK(first.body() == "api /api/v1/pods");
  CHECK(first.keep_alive());
  auto second = c.get("/version", "", http::verb::post);
  CHECK(second.body() == "root POST /version");
}

TEST_CASE("http_server: answers given later from another thread reach the client") {
  server_fixture f;
  std::promise<std::shared_ptr<http_exchange>> pending;
  f.server.add_route("/slow", [&](const http_request&, std::shared_ptr<http_exchange> x) {
    pending.set_value(std::move(x));
  });
  f.start();
  std::thread answerer([&] {
    auto exchange = pending.get_future().get();
    exchange->respond(text("later"));
    exchange->respond(text("twice")); // ignored: one answer per request
  });
  client c(f.server.port());
  auto response = c.get("/slow");
  answerer.join();
  CHECK(response.body() == "later");
  CHECK(c.get("/api/x").body() == "api /api/x"); // the connection still serves
}

TEST_CASE("http_server: a route that drops its exchange answers 500, one that throws too") {
  server_fixture f;
  f.server.add_route("/drop", [](const http_request&, std::shared_ptr<http_exchange>) {});
  f.server.add_route("/throw", [](const http_request&, std::shared_ptr<http_exchange>) {
    throw std::runtime_error("boom");
  });
  f.start();
  client c(f.server.port());
  auto dropped = c.get("/drop");
  CHECK(dropped.result_int() == 500);
  CHECK(status_reason(dropped.body()) == "InternalError");
  auto thrown = c.get("/throw");
  CHECK(thrown.result_int() == 500);
  CHECK(thrown.body().find("boom") != std::string::npos);
}

TEST_CASE("http_server: no matching route is a 404 Status") {
  http_server server;
  server.add_route("/only", [](const http_request&, std::shared_ptr<http_exchange> x) {
    x->respond(text("only"));
  });
  REQUIRE(server.start().ok());
  client c(server.port());
  auto response = c.get("/other");
  CHECK(response.result_int() == 404);
  CHECK(status_reason(response.body()) == "NotFound");
}

TEST_CASE("http_server: the bearer token check gives 401 without a token, 403 with a wrong one") {
  http_server_options options;
  options.bearer_token = "s3cret";
  server_fixture f(options);
  f.start();
  client c(f.server.port());
  auto none = c.get("/api/v1/pods");
  CHECK(none.result_int() == 401);
  CHECK(status_reason(none.body()) == "Unauthorized");
  auto wrong = c.get("/api/v1/pods", "s3crex");
  CHECK(wrong.result_int() == 403);
  CHECK(status_reason(wrong.body()) == "Forbidden");
  CHECK(c.get("/api/v1/pods", "s3cret1").result_int() == 403);
  auto right = c.get("/api/v1/pods", "s3cret");
  CHECK(right.result_int() == 200);
  CHECK(right.body() == "api /api/v1/pods");
}

TEST_CASE("http_server: malformed requests get a 400 Status and never crash the server") {
  server_fixture f;
  f.start();
  for (std::string_view garbage :
       {"GARBAGE\r\n\r\n", "GET /x HTTP/9.9\r\n\r\n", "GET /x HTTP/1.1\r\nBad Header\r\n\r\n",
        "GET /x HTTP/1.1\r\nContent-Length: abc\r\n\r\n"}) {
    client c(f.server.port());
    c.send_raw(garbage);
    std::string reply = c.read_to_end();
    INFO("request: " << garbage << "\nreply: " << reply);
    CHECK(reply.starts_with("HTTP/1.1 400"));
    CHECK(reply.find("\"kind\":\"Status\"") != std::string::npos);
  }
  {
    client c(f.server.port());
    c.send_raw("get"); // truncated, then gone
    c.close();
  }
  {
    client c(f.server.port());
    c.send_raw("GET relative HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(c.read_response().result_int() == 400);
  }
  client after(f.server.port());
  CHECK(after.get("/api/ok").result_int() == 200);
}

TEST_CASE("http_server: a body over the limit is refused with 413") {
  http_server_options options;
  options.max_request_body = 16;
  server_fixture f(options);
  f.start();
  client c(f.server.port());
  c.send_raw("POST /api HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" +
             std::string(100, 'x'));
  auto reply = c.read_to_end();
  CHECK(reply.starts_with("HTTP/1.1 413"));
}

TEST_CASE("http_server: bad listen addresses are clear errors, IPv6 loopback works") {
  for (const char* bad : {"127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", "no.such.host:80"}) {
    http_server server(listening_on(bad));
    auto started = server.start();
    INFO(bad);
    REQUIRE_FALSE(started.ok());
    CHECK(started.err().code == errc::invalid_argument);
  }
  server_fixture taken;
  taken.start();
  http_server clash(listening_on(taken.server.local_endpoint()));
  auto clashed = clash.start();
  REQUIRE_FALSE(clashed.ok());
  CHECK(clashed.err().code == errc::io);

  http_server_options v6;
  v6.listen = "[::1]:0";
  server_fixture f(v6);
  auto started = f.server.start();
  if (!started.ok()) {
    WARN("no IPv6 loopback here: " << started.err().describe());
    return;
  }
  CHECK(f.server.local_endpoint() == "[::1]:" + std::to_string(f.server.port()));
  client c(f.server.port(), "::1");
  CHECK(c.get("/api/six").body() == "api /api/six");
}

namespace {

// A route that opens a stream and hands it to the test.
struct stream_route {
  std::promise<std::shared_ptr<http_stream>> opened;

  // Asks for /watch on `c`'s connection; the stream the route opened for it.
  template <class Client>
  std::shared_ptr<http_stream> open(Client& c) {
    c.send_raw("GET /watch HTTP/1.1\r\nHost: x\r\n\r\n");
    return opened.get_future().get();
  }

  route_handler handler() {
    return [this](const http_request&, std::shared_ptr<http_exchange> x) {
      opened.set_value(x->stream(200, "application/json", {{"X-Test", "1"}}));
    };
  }
};

// Decodes a chunked body (everything after the header) into its data.
std::string dechunk(std::string_view raw, bool* terminated) {
  std::string data;
  *terminated = false;
  for (;;) {
    auto line_end = raw.find("\r\n");
    if (line_end == std::string_view::npos)
      return data;
    std::size_t size = std::stoul(std::string(raw.substr(0, line_end)), nullptr, 16);
    if (size == 0) {
      *terminated = raw.substr(line_end) == "\r\n\r\n";
      return data;
    }
    data.append(raw.substr(line_end + 2, size));
    raw.remove_prefix(line_end + 2 + size + 2);
  }
}

// A server with a /watch stream route, and a client on it whose stream the route has opened.
struct open_stream_fixture {
  server_fixture f;
  stream_route route;
  std::unique_ptr<client> c;
  std::shared_ptr<http_stream> stream;

  open_stream_fixture() {
    f.server.add_route("/watch", route.handler());
    f.start();
    c = std::make_unique<client>(f.server.port());
    stream = route.open(*c);
  }
};

// The head of a chunked response `raw` (up to the blank line), and its data, dechunked.
std::pair<std::string, std::string> head_and_data(const std::string& raw, bool* terminated) {
  auto header_end = raw.find("\r\n\r\n");
  REQUIRE(header_end != std::string::npos);
  return {raw.substr(0, header_end),
          dechunk(std::string_view(raw).substr(header_end + 4), terminated)};
}

// Writes made of pieces as a watch event is: short literal heads and tails around long shared
// bodies (written from where they are) and short ones (copied together). Once written, their
// owners are the stream's alone. Returns what the stream's data must be.
std::string write_events_in_pieces(http_stream& stream, int events) {
  std::string expected;
  for (int i = 0; i < events; ++i) {
    byte_pieces event;
    const std::size_t body_size = (i % 3 == 0) ? 40 : 1000 + 700 * static_cast<std::size_t>(i);
    auto body = std::make_shared<const std::string>(body_size, static_cast<char>('a' + i % 26));
    event.append_literal(R"({"type":"ADDED","object":")");
    event.append_shared(body, *body);
    event.append_literal("\"}\n");
    expected += event.joined();
    body.reset();
    REQUIRE(stream.write(std::move(event)));
  }
  return expected;
}

} // namespace

TEST_CASE("http_server: a stream written from another thread arrives in order, then ends") {
  open_stream_fixture s;
  auto& stream = s.stream;
  std::promise<stream_end> ended;
  stream->on_end([&](stream_end why) { ended.set_value(why); });
  std::thread writer([stream] {
    for (int i = 0; i < 100; ++i)
      REQUIRE(stream->write("line " + std::to_string(i) + "\n"));
    stream->close();
    CHECK_FALSE(stream->write("after close\n"));
  });
  std::string raw = s.c->read_to_end();
  writer.join();
  CHECK(ended.get_future().get() == stream_end::finished);
  bool terminated = false;
  auto [head, data] = head_and_data(raw, &terminated);
  CHECK(head.starts_with("HTTP/1.1 200 OK"));
  CHECK(head.find("Transfer-Encoding: chunked") != std::string::npos);
  CHECK(head.find("X-Test: 1") != std::string::npos);
  CHECK(terminated);
  std::string expected;
  for (int i = 0; i < 100; ++i)
    expected += "line " + std::to_string(i) + "\n";
  CHECK(data == expected);
  CHECK(s.f.server.open_streams() == 0);
}

TEST_CASE("http_server: writes in pieces arrive whole and in order, short pieces gathered") {
  open_stream_fixture s;
  std::string expected;
  std::thread writer([&] {
    expected = write_events_in_pieces(*s.stream, 30);
    s.stream->close();
  });
  std::string raw = s.c->read_to_end();
  writer.join();
  bool terminated = false;
  CHECK(head_and_data(raw, &terminated).second == expected);
  CHECK(terminated);
}

TEST_CASE("http_server: the stream learns when its client goes away") {
  server_fixture f;
  stream_route route;
  f.server.add_route("/watch", route.handler());
  f.start();
  client c(f.server.port());
  auto stream = route.open(c);
  std::promise<stream_end> ended;
  stream->on_end([&](stream_end why) { ended.set_value(why); });
  REQUIRE(stream->write("hello\n"));
  c.close();
  CHECK(ended.get_future().get() == stream_end::client_gone);
  CHECK(stream->closed());
  CHECK_FALSE(stream->write("nobody listens\n"));
  // Late subscribers to the end hear it at once.
  std::promise<stream_end> late;
  stream->on_end([&](stream_end why) { late.set_value(why); });
  CHECK(late.get_future().get() == stream_end::client_gone);
}

TEST_CASE("http_server: a client that does not read is dropped at the buffer bound") {
  http_server_options options;
  options.stream_buffer_limit = 64 * 1024;
  server_fixture f(options);
  stream_route route;
  f.server.add_route("/watch", route.handler());
  f.start();
  client c(f.server.port());
  auto stream = route.open(c);
  stream->set_overflow_message("{\"type\":\"ERROR\"}\n");
  std::promise<stream_end> ended;
  stream->on_end([&](stream_end why) { ended.set_value(why); });
  // The client reads nothing: the socket buffers fill, then the queue, then the bound drops it.
  const std::string line(4096, 'x');
  std::size_t written = 0;
  while (stream->write(line + "\n")) {
    ++written;
    REQUIRE(stream->buffered_bytes() <= options.stream_buffer_limit);
    REQUIRE(written < 1'000'000); // some bound must have been hit long before
  }
  CHECK(stream->closed());
  std::string raw = c.read_to_end();
  CHECK(ended.get_future().get() == stream_end::overflow);
  auto body = std::string_view(raw).substr(raw.find("\r\n\r\n") + 4);
  bool terminated = false;
  std::string data = dechunk(body, &terminated);
  CHECK(terminated);
  CHECK(data.ends_with("{\"type\":\"ERROR\"}\n"));
  CHECK(data.size() < written * (line.size() + 1)); // what overflowed was dropped
}

TEST_CASE("http_server: stop ends open streams cleanly and joins") {
  auto f = std::make_unique<server_fixture>();
  stream_route route;
  f->server.add_route("/watch", route.handler());
  f->start();
  client c(f->server.port());
  c.send_raw("GET /watch HTTP/1.1\r\nHost: x\r\n\r\n");
  auto stream = route.opened.get_future().get();
  std::promise<stream_end> ended;
  stream->on_end([&](stream_end why) { ended.set_value(why); });
  REQUIRE(stream->write("one\n"));
  client idle(f->server.port()); // a keep-alive connection with no request: closed too
  CHECK(idle.get("/api/a").result_int() == 200);
  f->server.stop();
  CHECK(ended.get_future().get() == stream_end::stopping);
  std::string raw = c.read_to_end();
  CHECK(raw.ends_with("0\r\n\r\n"));
  CHECK(idle.read_to_end().empty());
  CHECK_FALSE(stream->write("after stop\n"));
  f.reset(); // the stream outlives the server safely
  CHECK(stream->closed());
}

TEST_CASE("http_server: stop frees a stream whose client stopped reading") {
  http_server_options options;
  options.stream_buffer_limit = std::size_t{256} << 20; // neither bound acts before the stop
  options.stream_write_timeout = std::chrono::seconds(60);
  auto f = std::make_unique<server_fixture>(options);
  stream_route route;
  f->server.add_route("/watch", route.handler());
  f->start();
  client c(f->server.port());
  auto stream = route.open(c);
  // The client reads nothing: the socket buffers fill and a write stays in flight.
  const std::string chunk(64 * 1024, 'x');
  while (stream->buffered_bytes() < (std::size_t{8} << 20) && stream->write(chunk))
    ;
  f->server.stop(); // its deadline (3 s) ends the I/O threads with the write still in flight
  CHECK(stream->closed());
  f.reset();
  // The stalled write's session was released and its connection closed: the client, reading
  // now, finds the end instead of a connection that stays open.
  CHECK(c.closed_by_server(std::chrono::seconds(20)));
}

TEST_CASE("http_server: an answer given after stop frees its session and the server") {
  auto sentinel = std::make_shared<int>(0); // held by the route, so by the server
  const std::weak_ptr<int> server_alive = sentinel;
  std::promise<std::shared_ptr<http_exchange>> held;
  auto exchange = held.get_future();
  auto f = std::make_unique<server_fixture>();
  f->server.add_route(
      "/later", [sentinel, &held](const http_request&, std::shared_ptr<http_exchange> x) {
        held.set_value(std::move(x)); // answered after the stop, as a slow cache would
      });
  sentinel.reset();
  f->start();
  client c(f->server.port());
  c.send_raw("GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  auto late = exchange.get();
  f->server.stop();
  // Queued where no thread runs, this answer would hold its session, which holds the server.
  late->respond(text("too late"));
  late.reset();
  f.reset();
  CHECK(server_alive.expired());
}

TEST_CASE("http_server: a body given as pieces arrives whole, and the connection stays alive") {
  server_fixture f;
  auto big = std::make_shared<const std::string>(300000, 'x'); // several socket writes' worth
  f.server.add_route("/pieces", [big](const http_request&, std::shared_ptr<http_exchange> x) {
    http_response response = text("");
    response.body_pieces = {"[", *big, ",", "\"end\"", "]"};
    response.pieces_owner = big;
    x->respond(std::move(response));
  });
  f.start();
  client c(f.server.port());
  auto first = c.get("/pieces");
  CHECK(first.result_int() == 200);
  CHECK(first.body() == "[" + *big + ",\"end\"]");
  CHECK(first[http::field::content_length] == std::to_string(big->size() + 8));
  auto second = c.get("/api/next");
  CHECK(second.body() == "api /api/next");
}

TEST_CASE("http_server: a client that stops reading is dropped after the write timeout") {
  http_server_options options;
  options.stream_buffer_limit = std::size_t{256} << 20; // the timeout acts, not the buffer bound
  options.stream_write_timeout = std::chrono::milliseconds(200);
  server_fixture f(options);
  stream_route route;
  f.server.add_route("/watch", route.handler());
  f.start();
  client c(f.server.port());
  auto stream = route.open(c);
  std::promise<stream_end> ended;
  auto end = ended.get_future();
  stream->on_end([&](stream_end why) { ended.set_value(why); });
  // The client reads nothing: once the socket buffers are full a write stalls, and the timeout
  // drops the stream though far less than its buffer bound is queued.
  const std::string chunk(64 * 1024, 'x');
  while (stream->buffered_bytes() < (std::size_t{32} << 20) && stream->write(chunk))
    ;
  CHECK(end.get() == stream_end::write_timeout);
  CHECK(stream->closed());
  CHECK_FALSE(stream->write("late\n"));
  CHECK(stream->buffered_bytes() == 0); // its buffer is freed
  CHECK(f.server.stats().slow_streams_dropped == 1);
  CHECK(f.server.open_streams() == 0);
}

TEST_CASE("http_server: past max_connections a connection gets 429 with Retry-After") {
  http_server_options options;
  options.max_connections = 1;
  options.retry_after_seconds = 7;
  server_fixture f(options);
  f.start();
  client first(f.server.port());
  CHECK(first.get("/api/x").result_int() == 200); // its session is live
  client second(f.server.port());
  auto refused = second.read_to_end();
  CHECK(refused.starts_with("HTTP/1.1 429"));
  CHECK(refused.find("Retry-After: 7\r\n") != std::string::npos);
  CHECK(refused.find("\"reason\":\"TooManyRequests\"") != std::string::npos);
  CHECK(f.server.stats().connections_refused == 1);
  CHECK(first.get("/api/y").result_int() == 200); // the one admitted is unaffected
  CHECK(f.server.stats().bytes_written > 0);      // the two answers to the admitted client
}

TEST_CASE("http_server: over TLS a client that trusts its CA is served and streamed to, plain "
          "HTTP gets 400") {
  auto material = sim::make_self_signed_tls();
  REQUIRE(material.ok());
  auto dir =
      std::filesystem::temp_directory_path() / ("http-server-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cert.pem") << material->server_cert_pem;
  std::ofstream(dir / "key.pem") << material->server_key_pem;
  http_server_options options;
  options.tls_certificate_file = (dir / "cert.pem").string();
  options.tls_key_file = (dir / "key.pem").string();
  server_fixture f(options);
  stream_route route;
  f.server.add_route("/watch", route.handler());
  f.start();

  net::io_context ioc;
  net::ssl::context ctx(net::ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(material->ca_cert_pem));
  ctx.set_verify_mode(net::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> tls(ioc, ctx);
  beast::get_lowest_layer(tls).connect(
      tcp::endpoint(net::ip::make_address("127.0.0.1"), f.server.port()));
  tls.handshake(net::ssl::stream_base::client);
  for (const char* target : {"/api/one", "/api/two"}) { // keep-alive over TLS
    http::request<http::empty_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "localhost");
    http::write(tls, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(tls, buffer, response);
    CHECK(response.result_int() == 200);
    CHECK(response.body() == std::string("api ") + target);
  }

  { // a stream over TLS: every buffer is a record; the pieces arrive as written
    beast::ssl_stream<beast::tcp_stream> watch(ioc, ctx);
    beast::get_lowest_layer(watch).connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), f.server.port()));
    watch.handshake(net::ssl::stream_base::client);
    http::request<http::empty_body> request{http::verb::get, "/watch", 11};
    request.set(http::field::host, "localhost");
    http::write(watch, request);
    auto stream = route.opened.get_future().get();
    std::string expected;
    std::thread writer([&] {
      expected = write_events_in_pieces(*stream, 30);
      stream->close();
    });
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(watch, buffer, response);
    writer.join();
    CHECK(response.result_int() == 200);
    CHECK(response.body() == expected);
  }

  // Plain HTTP gets Go's 400 (as from the API server), so a client fails at once instead of
  // retrying a connection closed on it.
  client plain(f.server.port());
  plain.send_raw("GET /api/x HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(plain.read_to_end() ==
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n");

  http_server_options broken;
  broken.tls_certificate_file = (dir / "missing.pem").string();
  broken.tls_key_file = (dir / "key.pem").string();
  http_server bad(broken);
  auto refused = bad.start();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.err().message.find("missing.pem") != std::string::npos);
  std::filesystem::remove_all(dir);
}
