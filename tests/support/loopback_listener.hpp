#pragma once
// Test support: a TCP listener on 127.0.0.1:0 that serves each connection on its own thread with
// the function it was given, and on destruction wakes and joins them all (shutdown() wakes a
// thread blocked reading; close() alone would not). The proxies in tests are built on it.

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kinformer::testing {

class loopback_listener {
public:
  using socket = boost::asio::ip::tcp::socket;
  using serve_function = std::function<void(const std::shared_ptr<socket>& client)>;

  // `serve` runs on the connection's thread; it may block until either side closes.
  explicit loopback_listener(serve_function serve)
      : serve_(std::move(serve)), acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  loopback_listener(const loopback_listener&) = delete;
  loopback_listener& operator=(const loopback_listener&) = delete;
  ~loopback_listener() {
    // A blocking accept() is not woken by close(): stop, then connect once to wake it.
    stopping_ = true;
    boost::system::error_code ec;
    {
      socket wake(ioc_);
      wake.connect(acceptor_.local_endpoint(), ec);
      accept_thread_.join();
    }
    acceptor_.close(ec);
    std::vector<std::shared_ptr<socket>> sockets;
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      sockets.swap(sockets_);
      threads.swap(threads_);
    }
    for (auto& s : sockets)
      s->shutdown(socket::shutdown_both, ec);
    for (auto& t : threads)
      t.join();
  }

  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  boost::asio::io_context& io_context() { return ioc_; }

  // A socket a connection opened itself (to an upstream): shut down with the others at the end.
  // False once the listener is stopping (the socket was not taken).
  bool track(const std::shared_ptr<socket>& s) {
    std::lock_guard lock(mutex_);
    if (stopping_)
      return false;
    sockets_.push_back(s);
    return true;
  }

  // Copies `from` to `to` until either side ends, passing each read through `damage` (when
  // given) with the stream offset of its first byte, then ends `to`'s sending side.
  static void pipe(socket& from, socket& to,
                   const std::function<void(char*, std::size_t, std::size_t)>& damage = {}) {
    char buffer[16384];
    std::size_t offset = 0;
    boost::system::error_code ec;
    for (;;) {
      const std::size_t n = from.read_some(boost::asio::buffer(buffer), ec);
      if (ec)
        break;
      if (damage)
        damage(buffer, n, offset);
      offset += n;
      if (boost::asio::write(to, boost::asio::buffer(buffer, n), ec) != n || ec)
        break;
    }
    to.shutdown(socket::shutdown_send, ec);
  }

private:
  void accept_loop() {
    for (;;) {
      auto client = std::make_shared<socket>(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(*client, ec);
      if (ec || stopping_)
        return;
      std::lock_guard lock(mutex_);
      sockets_.push_back(client);
      threads_.emplace_back([this, client] { serve_(client); });
    }
  }

  serve_function serve_;
  std::atomic<bool> stopping_{false};
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread accept_thread_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<socket>> sockets_;
  std::vector<std::thread> threads_;
};

} // namespace kinformer::testing
