#include "tests/service/http_receiver.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <csignal>
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

// Loads PEM text into the context: the certificate, its key, and the CA for client certificates.
SSL_CTX* make_server_context(const receiver_tls& tls) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  auto read_pem = [](const std::string& pem, auto reader) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    auto* value = reader(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return value;
  };
  X509* cert = read_pem(tls.cert_pem, PEM_read_bio_X509);
  EVP_PKEY* key = read_pem(tls.key_pem, PEM_read_bio_PrivateKey);
  bool ok = ctx && cert && key && SSL_CTX_use_certificate(ctx, cert) == 1 &&
            SSL_CTX_use_PrivateKey(ctx, key) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  if (ok && !tls.client_ca_pem.empty()) {
    X509* ca = read_pem(tls.client_ca_pem, PEM_read_bio_X509);
    ok = ca && X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca) == 1;
    X509_free(ca);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  if (!ok) {
    SSL_CTX_free(ctx);
    throw std::runtime_error("http_receiver: bad TLS material");
  }
  return ctx;
}

// One accepted connection, plain or TLS, read and written the same way.
struct connection {
  int fd;
  SSL* ssl = nullptr;

  long recv(char* buffer, std::size_t size) {
    if (ssl)
      return SSL_read(ssl, buffer, static_cast<int>(size));
    return ::recv(fd, buffer, size, 0);
  }
  void send(const std::string& data) {
    if (ssl)
      SSL_write(ssl, data.data(), static_cast<int>(data.size()));
    else
      ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
  }
  std::string client_subject() const {
    if (!ssl)
      return {};
    X509* peer = SSL_get1_peer_certificate(ssl);
    if (!peer)
      return {};
    char line[256];
    X509_NAME_oneline(X509_get_subject_name(peer), line, sizeof line);
    X509_free(peer);
    return line;
  }
};

} // namespace

http_receiver::http_receiver(std::vector<int> script, const receiver_tls* tls)
    : script_(script.begin(), script.end()) {
  if (tls) {
    tls_ = make_server_context(*tls);
    // OpenSSL writes with write(2): a client gone early must not kill the test with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
  }
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
  SSL_CTX_free(tls_);
}

std::string http_receiver::url(const std::string& path) const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
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
  connection conn{fd};
  if (tls_) {
    conn.ssl = SSL_new(tls_);
    SSL_set_fd(conn.ssl, fd);
    if (SSL_accept(conn.ssl) != 1) {
      ERR_clear_error();
      SSL_free(conn.ssl);
      std::lock_guard lock(mutex_);
      ++failed_handshakes_;
      changed_.notify_all();
      return;
    }
  }
  struct free_ssl {
    SSL* ssl;
    ~free_ssl() { SSL_free(ssl); }
  } cleanup{conn.ssl};
  std::string data;
  char buffer[4096];
  std::size_t head_end;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    auto n = conn.recv(buffer, sizeof buffer);
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
    auto n = conn.recv(buffer, sizeof buffer);
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
  r.client_subject = conn.client_subject();
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
  conn.send(response);
}

} // namespace kinformer::testing
