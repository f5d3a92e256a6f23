#pragma once
// Test support: a minimal HTTP/1.1 receiver on 127.0.0.1 (plain sockets, one connection at a
// time) that records every request and answers with scripted status codes. It can hold its
// answers back to simulate a stalled endpoint, and serve HTTPS (OpenSSL on the same sockets),
// optionally asking for a client certificate. Waits block on a condition variable.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

typedef struct ssl_ctx_st SSL_CTX;

namespace kinformer::testing {

// PEM material for an HTTPS receiver.
struct receiver_tls {
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem; // non-empty: a client certificate signed by it is required
};

class http_receiver {
public:
  struct request {
    std::string method;
    std::string target;
    std::string content_type;
    std::string body;
    std::chrono::steady_clock::time_point at;
    int answered = 0;
    std::string client_subject; // HTTPS with a client certificate: its subject, one line
  };

  // Answers the first requests with `script`, every later one with 200. With `tls`, HTTPS.
  explicit http_receiver(std::vector<int> script = {}, const receiver_tls* tls = nullptr);
  ~http_receiver();

  std::string url(const std::string& path = "/hook") const;

  // While held, requests are read and recorded but not answered.
  void hold();
  void release();

  template <class Pred>
  bool wait_for(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return pred(requests_); });
  }
  std::vector<request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // HTTPS connections whose handshake failed (the client refused us, or we refused it).
  int failed_handshakes() const {
    std::lock_guard lock(mutex_);
    return failed_handshakes_;
  }
  bool wait_for_failed_handshakes(int count,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return failed_handshakes_ >= count; });
  }

private:
  void serve();
  void handle(int fd);

  int listener_ = -1;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<int> script_;
  std::vector<request> requests_;
  int failed_handshakes_ = 0;
  SSL_CTX* tls_ = nullptr;
  bool held_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace kinformer::testing
