#include "tests/service/http_receiver.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string_view>

namespace kinformer::testing {

namespace {

std::string header_value(std::string_view head, std::string_view name) {
  std::size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string_view::npos) {
    pos += 2;
    auto line = head.substr(pos, head.find("\r\n", pos) - pos);
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon != name.size())
      continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size(); ++i)
      same = same && std::tolower(line[i]) == std::tolower(name[i]);
    if (!same)
      continue;
    auto value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ')
      value.remove_prefix(1);
    return std::string(value);
  }
  return {};
}

} // namespace

http_receiver::http_receiver(std::vector<int> script) : script_(script.begin(), script.end()) {
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener_ < 0)
    throw std::runtime_error("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener_, 16) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("bind/listen");
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

http_receiver::~http_receiver() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    held_ = false;
  }
  changed_.notify_all();
  ::shutdown(listener_, SHUT_RDWR); // wakes accept()
  thread_.join();
  ::close(listener_);
}

std::string http_receiver::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void http_receiver::hold() {
  std::lock_guard lock(mutex_);
  held_ = true;
}

void http_receiver::release() {
  {
    std::lock_guard lock(mutex_);
    held_ = false;
  }
  changed_.notify_all();
}

void http_receiver::serve() {
  for (;;) {
    int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0)
      return;
    handle(fd);
    ::close(fd);
  }
}

void http_receiver::handle(int fd) {
  std::string data;
  char buffer[4096];
  std::size_t head_end;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0)
      return;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  std::string head = data.substr(0, head_end);
  std::size_t length = 0;
  if (auto value = header_value(head, "Content-Length"); !value.empty())
    length = std::stoul(value);
  std::string body = data.substr(head_end + 4);
  while (body.size() < length) {
    auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0)
      return;
    body.append(buffer, static_cast<std::size_t>(n));
  }
  request r;
  auto first_space = head.find(' ');
  r.method = head.substr(0, first_space);
  r.target = head.substr(first_space + 1, head.find(' ', first_space + 1) - first_space - 1);
  r.content_type = header_value(head, "Content-Type");
  r.body = std::move(body);
  r.at = std::chrono::steady_clock::now();
  int status = 200;
  {
    std::unique_lock lock(mutex_);
    if (!script_.empty()) {
      status = script_.front();
      script_.pop_front();
    }
    r.answered = status;
    requests_.push_back(std::move(r));
    changed_.notify_all();
    changed_.wait(lock, [&] { return !held_ || stopping_; });
    if (stopping_)
      return;
  }
  std::string response = "HTTP/1.1 " + std::to_string(status) +
                         " Scripted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  ::send(fd, response.data(), response.size(), MSG_NOSIGNAL);
}

} // namespace kinformer::testing
