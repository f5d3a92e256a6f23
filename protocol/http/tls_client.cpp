#include "protocol/http/tls_client.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace kinformer {

namespace ssl = boost::asio::ssl;
using boost::system::error_code;

status_result configure_tls_client(ssl::context& ctx, const tls_client_settings& settings) {
  error_code ec;
  const auto fail = [&](const std::string& what) {
    return make_error(errc::tls, what + ": " + ec.message());
  };
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                  ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  if (settings.insecure_skip_verify) {
    ctx.set_verify_mode(ssl::verify_none);
  } else {
    ctx.set_verify_mode(ssl::verify_peer);
    if (!settings.ca_data.empty()) {
      if (ctx.add_certificate_authority(boost::asio::buffer(settings.ca_data), ec); ec)
        return fail("CA data");
    } else if (!settings.ca_file.empty()) {
      if (ctx.load_verify_file(settings.ca_file, ec); ec)
        return fail("CA file \"" + settings.ca_file + "\"");
    } else if (ctx.set_default_verify_paths(ec); ec) {
      return fail("system CA store");
    }
  }
  if (!settings.client_cert_data.empty()) {
    if (ctx.use_certificate_chain(boost::asio::buffer(settings.client_cert_data), ec); ec)
      return fail("client certificate data");
  } else if (!settings.client_cert_file.empty()) {
    if (ctx.use_certificate_chain_file(settings.client_cert_file, ec); ec)
      return fail("client certificate \"" + settings.client_cert_file + "\"");
  }
  if (!settings.client_key_data.empty()) {
    if (ctx.use_private_key(boost::asio::buffer(settings.client_key_data), ssl::context::pem, ec);
        ec)
      return fail("client key data");
  } else if (!settings.client_key_file.empty()) {
    if (ctx.use_private_key_file(settings.client_key_file, ssl::context::pem, ec); ec)
      return fail("client key \"" + settings.client_key_file + "\"");
  }
  return ok_v;
}

void prepare_tls_connection(SSL* ssl, const std::string& host, bool verify) {
  const bool ip = is_ip_literal(host);
  if (!ip)
    SSL_set_tlsext_host_name(ssl, host.c_str());
  if (!verify)
    return;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (ip)
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  else
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
}

std::string describe_tls_failure(SSL* ssl, const error_code& ec) {
  std::string message = "TLS: " + ec.message();
  if (ssl) {
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK)
      message +=
          " (certificate verification: " + std::string(X509_verify_cert_error_string(verify)) + ")";
  }
  return message;
}

bool is_tls_error(const error_code& ec) {
  return ec.category() == boost::asio::error::get_ssl_category() ||
         ec.category() == ssl::error::get_stream_category();
}

bool is_ip_literal(const std::string& host) {
  error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

} // namespace kinformer
