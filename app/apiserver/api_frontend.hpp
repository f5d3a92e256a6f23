#pragma once
// The one API-server front end that the simulator and kinformerd's read API both serve through:
// it reads every request under /api, /apis, /version and /openapi as the API server does, and asks
// its backend (api_backend.hpp) only for objects.
//
// - Admission first (the backend's: a static token, or TokenReview and SubjectAccessReview).
// - Discovery (/api, /api/v1, /apis, /apis/{g}, /apis/{g}/{v}), /version, and /openapi/v2 and
//   /openapi/v3[/...] for the backend's kinds.
// - GET on a served resource: the path (scope, namespace, subresource), ListOptions
//   (list_query.hpp), watch (?watch=1 or the /watch/ prefix; on an item path a watch of that one
//   object), and the Accept header (response_form.hpp: objects, PartialObjectMetadata[List],
//   Table with includeObject; anything else 406). Gets and lists are rendered here
//   (resource_answer.hpp); watches stream from the backend.
// - Any other method goes to the backend's write(), or is 405 MethodNotAllowed.
// - Errors as Status JSON, as the API server words them.

#include "app/apiserver/http_server.hpp"

#include <memory>

namespace kinformer::apiserver {

class api_backend;
struct request_target;
struct route;

class api_frontend {
public:
  // `backend` must outlive the front end.
  explicit api_frontend(api_backend& backend);

  // Answers one request; thread-safe (called from every I/O thread).
  void handle(const http_request& request, std::shared_ptr<http_exchange> exchange);

private:
  void serve(const http_request& request, const request_target& target, const route& route,
             std::shared_ptr<http_exchange> exchange);
  void serve_resource(const http_request& request, const request_target& target, const route& route,
                      std::shared_ptr<http_exchange> exchange);

  api_backend& backend_;
};

} // namespace kinformer::apiserver
