#pragma once
// A tiny HTTP/1.1 server on 127.0.0.1:0 whose answers a test scripts, byte by byte.
//
// Each connection runs on its own thread and calls the test's handler once per request; the
// handler answers through `server_exchange`: a whole response, or a chunked one with chunk
// boundaries of its choosing, possibly dropping the connection midway. Handlers may block (on a
// future, say) to sequence a test with the client. Plain or TLS (certificate and key files).

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinformer::test {

struct received_request {
  std::string method;
  std::string target; // path and query, as sent
  std::string authorization;
  std::string accept;

  std::string path() const { return target.substr(0, target.find('?')); }
  // The decoded value of a query parameter, or nullopt when absent.
  std::optional<std::string> query(std::string_view key) const;
};

class server_exchange {
public:
  virtual ~server_exchange() = default;
  virtual const received_request& request() const = 0;

  // A complete response with Content-Length.
  void respond(int status, std::string_view body,
               const std::vector<std::pair<std::string, std::string>>& headers = {});
  // A chunked response: the header, then each chunk() is one HTTP chunk, sent at once.
  void start_chunked(int status = 200);
  void chunk(std::string_view data);
  void end_chunked();
  // Writes bytes as they are (to break framing on purpose).
  virtual void write_raw(std::string_view bytes) = 0;
  // Closes the connection abruptly; no further requests are read from it.
  virtual void drop() = 0;
};

struct server_tls_files {
  std::string cert_file;
  std::string key_file;
};

class scripted_server {
public:
  using handler = std::function<void(server_exchange&)>;

  explicit scripted_server(handler on_request, std::optional<server_tls_files> tls = {});
  ~scripted_server();
  scripted_server(const scripted_server&) = delete;
  scripted_server& operator=(const scripted_server&) = delete;

  unsigned short port() const;
  // "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT".
  std::string url() const;
  // Requests received so far (all connections).
  std::size_t request_count() const;
  // Connections accepted so far.
  std::size_t connection_count() const;

  struct state;

private:
  std::shared_ptr<state> state_;
};

} // namespace kinformer::test
