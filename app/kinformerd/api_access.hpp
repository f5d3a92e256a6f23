#pragma once
// Who may read through the read API, decided as kube-rbac-proxy decides it: a bearer token is
// authenticated with a TokenReview, and the verb, resource and namespace asked for are
// authorised with a SubjectAccessReview, both sent to the API server kinformerd watches. Answers
// are cached briefly (authenticated tokens and allowed requests longer than denied ones), so a
// busy client costs the API server a review every few minutes, not one per request.
//
// Requests without a token are refused (401) unless anonymous access is configured; a token the
// TokenReview does not accept is 401, a request the SubjectAccessReview denies 403, and a review
// that cannot be made (the API server is unreachable) 503. Discovery (no resource) needs
// authentication only.
//
// Thread-safe; callbacks run on the API client's I/O thread, or at once for cached answers.

#include "app/apiserver/access_request.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {
class api_client;
}

namespace kinformer::service {

struct access_options {
  bool anonymous = false;            // requests without a token are served unchecked
  bool subject_access_review = true; // false: every authenticated user may read everything
  std::chrono::seconds authenticated_ttl{120};
  std::chrono::seconds allowed_ttl{300};
  std::chrono::seconds denied_ttl{30};
  std::size_t max_cached = 10000; // per cache; past it the cache starts afresh
};

// What a request asks to do. An empty resource: discovery and OpenAPI documents.
using access_request = apiserver::access_request;

struct access_decision {
  int code = 200; // 200 allowed; 401, 403 or 503 refused
  std::string reason, message;
  bool allowed() const noexcept { return code == 200; }
};

class api_access {
public:
  api_access(std::shared_ptr<api_client> client, access_options options);
  ~api_access();
  api_access(const api_access&) = delete;
  api_access& operator=(const api_access&) = delete;

  // Decides `request`, made with the Authorization header `authorization` (if any).
  void check(std::optional<std::string_view> authorization, const access_request& request,
             std::function<void(access_decision)> done);

  // Reviews sent to the API server so far (TokenReview, SubjectAccessReview).
  std::size_t token_reviews() const;
  std::size_t access_reviews() const;

  struct state;

private:
  std::shared_ptr<state> state_;
};

} // namespace kinformer::service
