#pragma once
// A throwaway PKI for the simulator's HTTPS: a self-signed CA and a server certificate it signs,
// generated in memory with OpenSSL at start-up. Clients trust the CA PEM the simulator exposes.

#include "protocol/result.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace kinformer::sim {

struct tls_material {
  std::string ca_cert_pem;     // what clients trust
  std::string server_cert_pem; // the leaf, signed by the CA
  std::string server_key_pem;  // PKCS#8, unencrypted
};

struct certificate_request {
  std::vector<std::string> dns_names{"localhost"};
  std::vector<std::string> ip_addresses{"127.0.0.1", "::1"};
  std::chrono::hours validity{24 * 365};
  // Also valid for TLS clients (clientAuth): one leaf for both ends of a mutual-TLS test.
  bool client_auth = false;
};

// Generates EC P-256 keys, a CA certificate (CA:TRUE, keyCertSign) and a server certificate
// (serverAuth, with the requested subject alternative names). Fails only when OpenSSL does, or
// an IP address does not parse; the error carries OpenSSL's reason.
result<tls_material> make_self_signed_tls(const certificate_request& request = {});

} // namespace kinformer::sim
