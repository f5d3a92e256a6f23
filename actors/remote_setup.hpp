#pragma once
// What a process needs before it can publish the gateway or subscribe remotely: CAF's network
// layer (the middleman), TLS (caf::openssl) unless plaintext is asked for explicitly, and the
// wire types registered under the same names on both nodes.

#include <caf/fwd.hpp>

#include <string>

namespace kinformer {

// TLS for the remote-subscription connection. With a CA file, each side verifies the other's
// certificate against it (client certificates: only holders of a certificate the CA signed can
// subscribe). CAF 0.17 does not check host names: the CA is the trust boundary.
struct remote_tls {
  std::string certificate_file; // PEM; this node's certificate
  std::string key_file;         // PEM; its private key
  std::string ca_file;          // PEM; the CA that signs the peers' certificates
};

// Loads the middleman and registers the wire types; with `tls`, loads caf::openssl too and
// configures it. Call before constructing the actor_system.
void configure_remote(caf::actor_system_config& cfg, const remote_tls* tls);

} // namespace kinformer
