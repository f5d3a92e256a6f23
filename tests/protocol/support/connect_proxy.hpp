#pragma once
// A tiny HTTP CONNECT proxy on 127.0.0.1:0 for tests: it answers each CONNECT with 200 and then
// copies bytes both ways between the client and the target, one thread per direction. With a
// required Proxy-Authorization value it answers 407 to requests without it. It records every
// CONNECT target it was asked for.

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <istream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kinformer::test {

class connect_proxy {
public:
  explicit connect_proxy(std::string required_authorization = {})
      : required_(std::move(required_authorization)),
        acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  connect_proxy(const connect_proxy&) = delete;
  connect_proxy& operator=(const connect_proxy&) = delete;
  ~connect_proxy() {
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
    std::vector<std::thread> pipes;
    {
      std::lock_guard lock(mutex_);
      sockets.swap(sockets_);
      pipes.swap(pipes_);
    }
    for (auto& s : sockets)
      s->shutdown(socket::shutdown_both, ec); // wakes the blocked reads of the copying threads
    for (auto& t : pipes)
      t.join();
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::vector<std::string> targets() const {
    std::lock_guard lock(mutex_);
    return targets_;
  }

private:
  using socket = boost::asio::ip::tcp::socket;

  void accept_loop() {
    for (;;) {
      auto client = std::make_shared<socket>(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(*client, ec);
      if (ec || stopping_)
        return;
      std::lock_guard lock(mutex_);
      sockets_.push_back(client);
      pipes_.emplace_back([this, client] { serve(client); });
    }
  }

  void serve(const std::shared_ptr<socket>& client) {
    boost::system::error_code ec;
    boost::asio::streambuf head;
    boost::asio::read_until(*client, head, "\r\n\r\n", ec);
    if (ec)
      return;
    std::istream in(&head);
    std::string method, target, line;
    in >> method >> target;
    std::string authorization;
    while (std::getline(in, line) && line != "\r")
      if (line.rfind("Proxy-Authorization: ", 0) == 0)
        authorization = line.substr(21, line.size() - 22);
    {
      std::lock_guard lock(mutex_);
      targets_.push_back(target);
    }
    if (method != "CONNECT" || (!required_.empty() && authorization != required_)) {
      boost::asio::write(*client,
                         boost::asio::buffer(std::string(
                             method != "CONNECT" ? "HTTP/1.1 405 Method Not Allowed\r\n\r\n"
                                                 : "HTTP/1.1 407 Proxy Authentication Required\r\n"
                                                   "Content-Length: 0\r\n\r\n")),
                         ec);
      return;
    }
    auto upstream = std::make_shared<socket>(ioc_);
    const auto colon = target.rfind(':');
    boost::asio::ip::tcp::resolver resolver(ioc_);
    boost::asio::connect(
        *upstream, resolver.resolve(target.substr(0, colon), target.substr(colon + 1), ec), ec);
    if (ec)
      return;
    boost::asio::write(*client, boost::asio::buffer(std::string("HTTP/1.1 200 OK\r\n\r\n")), ec);
    std::thread back;
    {
      std::lock_guard lock(mutex_);
      if (stopping_)
        return; // the destructor has collected the sockets already
      sockets_.push_back(upstream);
    }
    back = std::thread([client, upstream] { copy(*upstream, *client); });
    copy(*client, *upstream);
    back.join();
  }

  static void copy(socket& from, socket& to) {
    char buffer[16384];
    boost::system::error_code ec;
    for (;;) {
      const std::size_t n = from.read_some(boost::asio::buffer(buffer), ec);
      if (ec || boost::asio::write(to, boost::asio::buffer(buffer, n), ec) != n || ec)
        break;
    }
    to.shutdown(socket::shutdown_send, ec);
  }

  std::string required_;
  std::atomic<bool> stopping_{false};
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread accept_thread_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<socket>> sockets_;
  std::vector<std::thread> pipes_;
  std::vector<std::string> targets_;
};

} // namespace kinformer::test
