#pragma once
// Test support: a TCP forwarder on 127.0.0.1:0 to a server on 127.0.0.1:`upstream_port` that
// damages what the server sends on its first `damaged_connections` connections: past the first
// `clean_prefix` bytes of each, every `every`-th byte becomes 0x01, which is valid nowhere in JSON
// text nor in HTTP chunk framing. Later connections pass through untouched, so a client that
// recovers by reconnecting converges. One thread per direction, as connect_proxy.hpp.

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kinformer::testing {

class corrupting_proxy {
public:
  corrupting_proxy(std::uint16_t upstream_port, std::size_t damaged_connections,
                   std::size_t every = 4096, std::size_t clean_prefix = 256)
      : upstream_port_(upstream_port), damaged_connections_(damaged_connections), every_(every),
        clean_prefix_(clean_prefix),
        acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  corrupting_proxy(const corrupting_proxy&) = delete;
  corrupting_proxy& operator=(const corrupting_proxy&) = delete;
  ~corrupting_proxy() {
    // A blocking accept() is not woken by close(): stop, then connect once to wake it.
    stopping_ = true;
    boost::system::error_code ec;
    {
      socket wake(ioc_);
      wake.connect(acceptor_.local_endpoint(), ec);
      accept_thread_.join();
    }
    std::vector<std::shared_ptr<socket>> sockets;
    std::vector<std::thread> pipes;
    {
      std::lock_guard lock(mutex_);
      sockets.swap(sockets_);
      pipes.swap(pipes_);
    }
    // shutdown() wakes a thread blocked reading the socket; close() alone would not.
    for (auto& s : sockets) {
      s->shutdown(socket::shutdown_both, ec);
      s->close(ec);
    }
    for (auto& t : pipes)
      t.join();
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::size_t connections() const { return connections_; }
  std::size_t bytes_damaged() const { return bytes_damaged_; }

private:
  using socket = boost::asio::ip::tcp::socket;

  void accept_loop() {
    for (;;) {
      auto client = std::make_shared<socket>(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(*client, ec);
      if (stopping_ || ec)
        return;
      auto upstream = std::make_shared<socket>(ioc_);
      upstream->connect({boost::asio::ip::make_address("127.0.0.1"), upstream_port_}, ec);
      if (ec)
        continue;
      const bool damage = connections_++ < damaged_connections_;
      std::lock_guard lock(mutex_);
      sockets_.push_back(client);
      sockets_.push_back(upstream);
      pipes_.emplace_back([client, upstream] { copy(*client, *upstream, nullptr); });
      pipes_.emplace_back(
          [this, client, upstream, damage] { copy(*upstream, *client, damage ? this : nullptr); });
    }
  }

  // Copies until either side closes; `damager` (when given) damages the bytes on the way.
  static void copy(socket& from, socket& to, corrupting_proxy* damager) {
    char buffer[16384];
    std::size_t offset = 0; // bytes of this stream so far
    boost::system::error_code ec;
    for (;;) {
      const std::size_t n = from.read_some(boost::asio::buffer(buffer), ec);
      if (ec)
        break;
      if (damager)
        for (std::size_t i = 0; i < n; ++i)
          if (offset + i >= damager->clean_prefix_ && (offset + i) % damager->every_ == 0) {
            buffer[i] = '\x01';
            ++damager->bytes_damaged_;
          }
      offset += n;
      if (boost::asio::write(to, boost::asio::buffer(buffer, n), ec) != n || ec)
        break;
    }
    to.shutdown(socket::shutdown_send, ec);
  }

  const std::uint16_t upstream_port_;
  const std::size_t damaged_connections_;
  const std::size_t every_;
  const std::size_t clean_prefix_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> connections_{0};
  std::atomic<std::size_t> bytes_damaged_{0};
  std::thread accept_thread_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<socket>> sockets_;
  std::vector<std::thread> pipes_;
};

} // namespace kinformer::testing
