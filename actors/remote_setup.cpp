#include "actors/remote_setup.hpp"

#include "actors/remote_messages.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include <string>

namespace kinformer {

void configure_remote(caf::actor_system_config& cfg, const remote_tls* tls) {
  cfg.load<caf::io::middleman>();
  // Named strings, not literals: g++ 12 inlines a literal's copy into CAF's registration and
  // warns falsely (-Warray-bounds) on it.
  const std::string delta = "kinformer.wire_delta", batch = "kinformer.wire_batch",
                    request = "kinformer.remote_subscription_request";
  cfg.add_message_type<wire_delta>(delta);
  cfg.add_message_type<wire_batch>(batch);
  cfg.add_message_type<remote_subscription_request>(request);
  if (tls != nullptr) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = tls->certificate_file;
    cfg.openssl_key = tls->key_file;
    cfg.openssl_cafile = tls->ca_file;
  }
}

} // namespace kinformer
