#pragma once
// Test support: a TCP forwarder on 127.0.0.1:0 to a server on 127.0.0.1:`upstream_port` that
// damages what the server sends on its first `damaged_connections` connections: past the first
// `clean_prefix` bytes of each, every `every`-th byte becomes 0x01, which is valid nowhere in JSON
// text nor in HTTP chunk framing. Later connections pass through untouched, so a client that
// recovers by reconnecting converges.

#include "tests/support/loopback_listener.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace kinformer::testing {

class corrupting_proxy {
public:
  corrupting_proxy(std::uint16_t upstream_port, std::size_t damaged_connections,
                   std::size_t every = 4096, std::size_t clean_prefix = 256)
      : upstream_port_(upstream_port), damaged_connections_(damaged_connections), every_(every),
        clean_prefix_(clean_prefix),
        listener_([this](const std::shared_ptr<socket>& client) { forward(client); }) {}

  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_.port()); }
  std::size_t connections() const { return connections_; }
  std::size_t bytes_damaged() const { return bytes_damaged_; }

private:
  using socket = loopback_listener::socket;

  void forward(const std::shared_ptr<socket>& client) {
    auto upstream = std::make_shared<socket>(listener_.io_context());
    boost::system::error_code ec;
    upstream->connect({boost::asio::ip::make_address("127.0.0.1"), upstream_port_}, ec);
    if (ec || !listener_.track(upstream))
      return;
    const bool damaged = connections_++ < damaged_connections_;
    std::thread requests([client, upstream] { loopback_listener::pipe(*client, *upstream); });
    if (damaged)
      loopback_listener::pipe(
          *upstream, *client,
          [this](char* bytes, std::size_t n, std::size_t offset) { damage(bytes, n, offset); });
    else
      loopback_listener::pipe(*upstream, *client);
    requests.join();
  }

  void damage(char* bytes, std::size_t n, std::size_t offset) {
    for (std::size_t i = 0; i < n; ++i)
      if (offset + i >= clean_prefix_ && (offset + i) % every_ == 0) {
        bytes[i] = '\x01';
        ++bytes_damaged_;
      }
  }

  const std::uint16_t upstream_port_;
  const std::size_t damaged_connections_;
  const std::size_t every_;
  const std::size_t clean_prefix_;
  std::atomic<std::size_t> connections_{0};
  std::atomic<std::size_t> bytes_damaged_{0};
  loopback_listener listener_; // last: its threads use the members above
};

} // namespace kinformer::testing
