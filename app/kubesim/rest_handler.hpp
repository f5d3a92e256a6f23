#pragma once
// The simulator's REST half: turns a decoded request into a `reply` by calling the storage
// (discovery, OpenAPI, get/list/create/update/patch/delete, Status errors, /sim/ control routes).
// It does no I/O and knows nothing of Beast: simulator.cpp reads requests, writes the replies and
// streams the watches this hands back as `watch_reply`.

#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kinformer::sim {

struct header_field {
  std::string name;
  std::string value;
};

// A complete response with a small body.
struct simple_reply {
  unsigned code = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<header_field> headers;
};

// A JSON list written as head + items joined by commas + tail, straight from the stored strings
// (the transport gathers them into one write; nothing is copied).
struct list_reply {
  std::string head;
  std::vector<std::shared_ptr<const std::string>> items;
  std::string tail;
};

// A watch to open on the storage and stream until `timeout`.
struct watch_reply {
  watch_request request;
  std::chrono::seconds timeout;
};

using reply = std::variant<simple_reply, list_reply, watch_reply>;

// A request with the transport's types left out. Views into the transport's request.
struct api_request {
  std::string_view method;
  std::string_view target;
  std::string_view accept;
  std::string_view content_type;
  std::string_view authorization;
  bool client_certificate = false; // a verified TLS client certificate came with it
  const std::string& body;
};

// The Status as an HTTP reply (its code, a JSON body, Retry-After when it says so).
simple_reply status_reply(const status& s);

class rest_handler {
public:
  // Both must outlive the handler.
  rest_handler(storage& store, const simulator_options& options);

  // host:port as clients reach the server, for /api. Set before serving starts.
  void set_server_address(std::string address);

  // See simulator::add_control_route. Thread-safe.
  void add_control_route(std::string prefix, control_handler handler);

  // Serves one request; thread-safe (called from every I/O thread).
  reply handle(const api_request& request);

private:
  reply serve_control(const std::string& path, const std::map<std::string, std::string>& query,
                      const api_request& request);
  reply serve_openapi(const std::vector<std::string>& segments, std::string_view accept) const;

  storage& store_;
  const simulator_options& options_;
  std::string server_address_;
  std::mutex routes_mutex_;
  std::map<std::string, control_handler> routes_;
};

} // namespace kinformer::sim
