#include "app/kubesim/self_signed_cert.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <memory>

namespace kinformer::sim {
namespace {

template <class T, void (*Free)(T*)>
struct openssl_deleter {
  void operator()(T* p) const noexcept { Free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, openssl_deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, openssl_deleter<X509, X509_free>>;
using bio_ptr = std::unique_ptr<BIO, openssl_deleter<BIO, BIO_free_all>>;
using names_ptr =
    std::unique_ptr<GENERAL_NAMES, openssl_deleter<GENERAL_NAMES, GENERAL_NAMES_free>>;

// The reason of the most recent OpenSSL failure, prefixed with what we were doing.
error openssl_error(const std::string& what) {
  unsigned long code = ERR_get_error();
  char reason[256] = "unknown error";
  if (code != 0)
    ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  return make_error(errc::tls, what + ": " + reason);
}

result<pkey_ptr> make_ec_key() {
  pkey_ptr key(EVP_EC_gen("P-256"));
  if (!key)
    return openssl_error("generating an EC P-256 key");
  return key;
}

// Adds an X.509v3 extension written in OpenSSL's config syntax ("critical,CA:TRUE").
status_result add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr)
    return openssl_error(std::string("building extension ") + OBJ_nid2sn(nid));
  int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (added != 1)
    return openssl_error(std::string("adding extension ") + OBJ_nid2sn(nid));
  return ok_v;
}

result<names_ptr> subject_alt_names(const certificate_request& request) {
  names_ptr names(sk_GENERAL_NAME_new_null());
  for (const auto& dns : request.dns_names) {
    GENERAL_NAME* gn = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    ASN1_STRING_set(text, dns.data(), static_cast<int>(dns.size()));
    GENERAL_NAME_set0_value(gn, GEN_DNS, text);
    sk_GENERAL_NAME_push(names.get(), gn);
  }
  for (const auto& ip : request.ip_addresses) {
    unsigned char raw[16];
    int length = 0;
    if (inet_pton(AF_INET, ip.c_str(), raw) == 1)
      length = 4;
    else if (inet_pton(AF_INET6, ip.c_str(), raw) == 1)
      length = 16;
    else
      return make_error(errc::invalid_argument, "not an IP address: \"" + ip + "\"");
    GENERAL_NAME* gn = GENERAL_NAME_new();
    ASN1_OCTET_STRING* octets = ASN1_OCTET_STRING_new();
    ASN1_OCTET_STRING_set(octets, raw, length);
    GENERAL_NAME_set0_value(gn, GEN_IPADD, octets);
    sk_GENERAL_NAME_push(names.get(), gn);
  }
  return names;
}

// A certificate for `subject_cn` carrying `key`, signed by `issuer_key` (itself when issuer is
// null: self-signed). Extensions are added by the caller before signing.
result<x509_ptr> new_certificate(const std::string& subject_cn, EVP_PKEY* key,
                                 std::chrono::hours validity) {
  x509_ptr cert(X509_new());
  if (!cert)
    return openssl_error("allocating a certificate");
  X509_set_version(cert.get(), 2); // v3
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1)
    return openssl_error("drawing a serial number");
  serial[0] &= 0x7f; // serials are positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  // Back-date by an hour so clocks slightly behind still accept it.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()),
                  std::chrono::duration_cast<std::chrono::seconds>(validity).count());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("kubesim"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(subject_cn.c_str()), -1, -1, 0);
  if (X509_set_pubkey(cert.get(), key) != 1)
    return openssl_error("setting the public key");
  return cert;
}

result<std::string> to_pem(X509* cert) {
  bio_ptr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(bio.get(), cert) != 1)
    return openssl_error("writing a certificate PEM");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

result<std::string> to_pem(EVP_PKEY* key) {
  bio_ptr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return openssl_error("writing a private key PEM");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

} // namespace

result<tls_material> make_self_signed_tls(const certificate_request& request) {
  auto ca_key = make_ec_key();
  if (!ca_key)
    return std::move(ca_key).err();
  auto server_key = make_ec_key();
  if (!server_key)
    return std::move(server_key).err();

  auto ca = new_certificate("kubesim-ca", ca_key->get(), request.validity);
  if (!ca)
    return std::move(ca).err();
  X509_set_issuer_name(ca->get(), X509_get_subject_name(ca->get()));
  for (auto [nid, value] :
       {std::pair{NID_basic_constraints, "critical,CA:TRUE"},
        std::pair{NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
        std::pair{NID_subject_key_identifier, "hash"}}) {
    if (auto added = add_extension(ca->get(), ca->get(), nid, value); !added)
      return std::move(added).err();
  }
  if (X509_sign(ca->get(), ca_key->get(), EVP_sha256()) == 0)
    return openssl_error("signing the CA certificate");

  auto server = new_certificate("kubesim", server_key->get(), request.validity);
  if (!server)
    return std::move(server).err();
  X509_set_issuer_name(server->get(), X509_get_subject_name(ca->get()));
  for (auto [nid, value] :
       {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
        std::pair{NID_key_usage, "critical,digitalSignature,keyEncipherment"},
        std::pair{NID_ext_key_usage, request.client_auth ? "serverAuth,clientAuth" : "serverAuth"},
        std::pair{NID_subject_key_identifier, "hash"},
        std::pair{NID_authority_key_identifier, "keyid:always"}}) {
    if (auto added = add_extension(server->get(), ca->get(), nid, value); !added)
      return std::move(added).err();
  }
  auto names = subject_alt_names(request);
  if (!names)
    return std::move(names).err();
  if (X509_add1_ext_i2d(server->get(), NID_subject_alt_name, names->get(), 0, X509V3_ADD_DEFAULT) !=
      1)
    return openssl_error("adding subjectAltName");
  if (X509_sign(server->get(), ca_key->get(), EVP_sha256()) == 0)
    return openssl_error("signing the server certificate");

  tls_material out;
  for (auto [target, pem] : {std::pair{&out.ca_cert_pem, to_pem(ca->get())},
                             std::pair{&out.server_cert_pem, to_pem(server->get())},
                             std::pair{&out.server_key_pem, to_pem(server_key->get())}}) {
    if (!pem)
      return std::move(pem).err();
    *target = std::move(*pem);
  }
  return out;
}

} // namespace kinformer::sim
