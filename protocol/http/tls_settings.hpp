#pragma once
// What a TLS client trusts and presents: plain data, light to include (the SSL context it
// configures lives in tls_client.hpp).

#include <string>

namespace kinformer {

// Each pair: PEM data wins over the file; both empty means none (for the CA: the system's
// trust store).
struct tls_client_settings {
  bool insecure_skip_verify = false;
  std::string ca_data;
  std::string ca_file;
  std::string client_cert_data;
  std::string client_cert_file;
  std::string client_key_data;
  std::string client_key_file;
};

} // namespace kinformer
