#pragma once
// TLS client setup shared by everything that dials out (the API client, the webhook sender):
// one SSL context from PEM data or files, and per-connection SNI and peer-name checks. Include
// it only in the translation units that already hold Asio's SSL headers.

#include "protocol/http/tls_settings.hpp"
#include "protocol/result.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <string>

typedef struct ssl_st SSL;

namespace kinformer {

// TLS 1.2 or newer, peer verification on unless insecure_skip_verify; errc::tls naming the
// piece of material that failed to load.
status_result configure_tls_client(boost::asio::ssl::context& context,
                                   const tls_client_settings& settings);

// Before the handshake: SNI for a host name (never for an IP, RFC 6066) and, when verifying,
// the name or IP address the peer's certificate must carry.
void prepare_tls_connection(SSL* ssl, const std::string& host, bool verify);

// A handshake or stream failure in words, with the certificate verification result if any.
std::string describe_tls_failure(SSL* ssl, const boost::system::error_code& ec);

bool is_tls_error(const boost::system::error_code& ec);

bool is_ip_literal(const std::string& host);

} // namespace kinformer
