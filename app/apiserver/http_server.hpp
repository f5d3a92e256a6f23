#pragma once
// The HTTP/1.1 server every API server of the project serves through (kinformerd's read API,
// metrics and probes; the simulator): its own I/O threads, keep-alive, routes chosen by path
// prefix, plain responses and streamed chunked responses (watches), optional TLS (with optional
// client certificates), an optional bearer-token check, bounds, a graceful stop, and the
// connection-level faults the simulator injects (dropped, stalled and delayed streams).
//
// Routes answer asynchronously: a handler gets the request and an `http_exchange`, and may answer
// from any thread, now or later, so that nothing it waits for (the cache) blocks an I/O thread.
//
// Beast and Asio stay in http_server.cpp; this header is cheap to include.

#include "app/apiserver/byte_pieces.hpp"
#include "protocol/result.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinformer::apiserver {

using http_headers = std::vector<std::pair<std::string, std::string>>;

struct http_request {
  std::string method;   // "GET", "POST", ...
  std::string target;   // as sent: "/api/v1/pods?watch=1"
  std::string path;     // the target without its query (not percent-decoded)
  http_headers headers; // names lower case
  std::string body;
  // TLS: the client presented a certificate that the configured client CA signed.
  bool client_certificate = false;

  // The first header named `name` (lower case), if any.
  std::optional<std::string_view> header(std::string_view name) const;
};

struct http_response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  http_headers headers; // extra headers
  // When not empty, the body instead of `body`: pieces written one after another as they are,
  // never copied together (a list's items are the stored objects' own bytes). `pieces_owner`
  // keeps what they point into alive until they are written.
  std::vector<std::string_view> body_pieces;
  std::shared_ptr<const void> pieces_owner;
};

// A Kubernetes Status failure as a response: {"kind":"Status",...,"code":404,"reason":...}.
http_response status_response(int code, std::string_view reason, std::string_view message);

// Why a stream ended.
enum class stream_end {
  finished,      // the route called close()
  client_gone,   // the client closed its connection (or it failed)
  overflow,      // the client read too slowly: more than the bound was waiting to be written
  write_timeout, // the client read too slowly: one write took longer than the bound
  stopping,      // the server is stopping
  dropped,       // the server dropped it (drop_streams(), a certificate replaced)
};
const char* to_string(stream_end end) noexcept;

// A chunked response body being written, usable from any thread. Writes are queued and written
// in order; when what waits to be written exceeds the server's stream_buffer_limit, the stream
// is dropped: the queue is discarded, the overflow message (if any) is written as the last chunk
// and the connection is closed. A slow client therefore costs at most the bound in memory.
class http_stream {
public:
  virtual ~http_stream() = default;

  // Queues `pieces` as one write, in order; false once the stream has ended (they are then
  // dropped). Long pieces are written from where they are, never copied (a stored object's bytes
  // in a watch event, the simulator's watch lines shared by every watcher); short ones are copied
  // together, so that a run of them costs one buffer (over TLS, one record).
  virtual bool write(byte_pieces pieces) = 0;
  bool write(std::string chunk) { return write(byte_pieces(std::move(chunk))); }
  bool write(std::shared_ptr<const std::string> chunk) {
    return write(byte_pieces(std::move(chunk)));
  }
  // Past `writes` writes waiting to be written, the stream takes no more and ends cleanly once
  // those are written (as the API server ends a watcher that falls behind); 0: no bound.
  virtual void limit_queue(std::size_t writes) = 0;
  // Ends the stream as close() does after `duration` (a watch's timeoutSeconds).
  virtual void close_after(std::chrono::milliseconds duration) = 0;
  // Ends the stream (the terminating chunk is written after what is queued).
  virtual void close() = 0;
  virtual bool closed() const = 0;
  // Written instead of the queue when the stream is dropped for overflowing the server's
  // stream_buffer_limit (e.g. a watch ERROR event telling the client why).
  virtual void set_overflow_message(std::string message) = 0;
  // Called once when the stream ends, for whatever reason, on an I/O thread; immediately when it
  // has already ended. Keep it short.
  virtual void on_end(std::function<void(stream_end)> callback) = 0;
  // Bytes queued and not yet written.
  virtual std::size_t buffered_bytes() const = 0;
  // The server's stream_buffer_limit: past it the stream is dropped. A writer with much to send
  // (a watch's initial events) keeps buffered_bytes() well below it and sends at the client's pace.
  virtual std::size_t buffer_limit() const = 0;
};

// One request's answer, given once from any thread: a plain response or the start of a stream.
// An exchange dropped without an answer answers 500, so a route cannot leave a client hanging.
// After the server has stopped, an answer is dropped where it is given (its connection is closed
// already); a stream started then ends at once.
class http_exchange {
public:
  virtual ~http_exchange() = default;
  virtual void respond(http_response response) = 0;
  // Sends the status line and headers with chunked transfer encoding and returns the body.
  virtual std::shared_ptr<http_stream> stream(int status, std::string content_type,
                                              http_headers headers = {}) = 0;
};

using route_handler =
    std::function<void(const http_request& request, std::shared_ptr<http_exchange> exchange)>;

struct http_server_options {
  // host:port; port 0 picks a free one. IPv6 literals in brackets: "[::1]:0".
  std::string listen = "127.0.0.1:0";
  std::size_t io_threads = 1;
  // The I/O threads' name (top -H, the benchmarks' per-thread CPU); at most 15 characters.
  std::string thread_name = "http-io";
  // The Server header.
  std::string server_name = "kinformer";
  // When not empty, every request must carry `Authorization: Bearer <token>`: 401 without one,
  // 403 with a wrong one.
  std::string bearer_token;
  std::size_t max_request_body = 1 << 20;
  // Bytes a stream may have queued and unwritten before it is dropped.
  std::size_t stream_buffer_limit = 8 << 20;
  // An idle keep-alive connection (or a request that arrives too slowly) is closed after this.
  std::chrono::milliseconds idle_timeout{60000};
  // A stream whose client takes longer than this to accept one write is dropped and its buffer
  // freed, however little is queued (a quiet watch whose client stopped reading).
  std::chrono::milliseconds stream_write_timeout{30000};
  // HTTPS: the server's certificate chain and key (PEM files, read at start()). Both empty:
  // plain HTTP. A client that speaks plain HTTP to an HTTPS listener gets Go's answer, "400 Bad
  // Request ... Client sent an HTTP request to an HTTPS server.", and is disconnected.
  std::string tls_certificate_file;
  std::string tls_key_file;
  // HTTPS from PEM text instead of files (a generated certificate); see replace_certificate().
  std::string tls_certificate_pem;
  std::string tls_key_pem;
  // With TLS: client certificates signed by this CA (PEM) are verified and reported in
  // http_request::client_certificate. Clients without one are still served.
  std::string tls_client_ca_pem;
  // Connections open at once; past it, a new one is answered 429 with Retry-After and closed
  // (with TLS, closed without an answer). 0: no bound.
  std::size_t max_connections = 0;
  // The Retry-After (seconds) of every 429 for a bound.
  unsigned retry_after_seconds = 1;
};

// What the server counted since it started.
struct http_server_stats {
  std::uint64_t connections_refused = 0;  // past max_connections
  std::uint64_t slow_streams_dropped = 0; // overflow or write timeout
  std::uint64_t bytes_written = 0;        // response and stream bytes, headers included
};

class http_server {
public:
  explicit http_server(http_server_options options = {});
  // Stops the server if it still runs.
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Registers `handler` for every path starting with `prefix`; the longest matching prefix wins,
  // a later registration of the same prefix replaces the earlier one. Register before start().
  void add_route(std::string prefix, route_handler handler);

  // Binds the listen address and starts the I/O threads. Fails on a malformed or taken address.
  status_result start();
  // Closes the listener, ends every stream (terminating chunk), closes every connection and
  // joins the I/O threads. Idempotent.
  void stop();

  // The bound address as "host:port" ("[::1]:8080" for IPv6); valid after start().
  std::string local_endpoint() const;
  std::uint16_t port() const;
  // Streams being written right now.
  std::size_t open_streams() const;
  http_server_stats stats() const;

  // HTTPS with a new certificate from now on: new connections get it, every open connection is
  // closed (a response being written goes out first; a stream ends without its terminating
  // chunk). Fails without TLS or on a certificate that does not load.
  status_result replace_certificate(std::string certificate_pem, std::string key_pem);

  // Connection-level faults (the simulator's), from any thread.
  // Closes every open stream's connection abruptly (no terminating chunk), as a dying server
  // would.
  void drop_streams();
  // Open streams stop writing but keep their connections; resume_streams() writes what queued up
  // meanwhile (bounds still apply). Streams opened later are not stalled.
  void stall_streams();
  void resume_streams();
  // Delays every request by `delay` before its route sees it.
  void set_latency(std::chrono::milliseconds delay);

  struct impl; // shared with the sessions and exchanges of http_server.cpp

private:
  std::shared_ptr<impl> impl_;
};

} // namespace kinformer::apiserver
