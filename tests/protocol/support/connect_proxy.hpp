#pragma once
// A tiny HTTP CONNECT proxy on 127.0.0.1:0 for tests: it answers each CONNECT with 200 and then
// copies bytes both ways between the client and the target, one thread per direction. With a
// required Proxy-Authorization value it answers 407 to requests without it. It records every
// CONNECT target it was asked for.

#include "tests/support/loopback_listener.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>

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
        listener_([this](const std::shared_ptr<socket>& client) { serve(client); }) {}

  std::string url() const { return "http://127.0.0.1:" + std::to_string(listener_.port()); }
  std::vector<std::string> targets() const {
    std::lock_guard lock(mutex_);
    return targets_;
  }

private:
  using socket = testing::loopback_listener::socket;

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
    auto upstream = std::make_shared<socket>(listener_.io_context());
    const auto colon = target.rfind(':');
    boost::asio::ip::tcp::resolver resolver(listener_.io_context());
    boost::asio::connect(
        *upstream, resolver.resolve(target.substr(0, colon), target.substr(colon + 1), ec), ec);
    if (ec)
      return;
    boost::asio::write(*client, boost::asio::buffer(std::string("HTTP/1.1 200 OK\r\n\r\n")), ec);
    if (!listener_.track(upstream))
      return; // the proxy is stopping
    std::thread back([client, upstream] { testing::loopback_listener::pipe(*upstream, *client); });
    testing::loopback_listener::pipe(*client, *upstream);
    back.join();
  }

  std::string required_;
  mutable std::mutex mutex_;
  std::vector<std::string> targets_;
  testing::loopback_listener listener_; // last: its threads use the members above
};

} // namespace kinformer::test
