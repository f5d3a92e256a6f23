#pragma once
// What a request to an API server asks to do, as admission (authentication and authorisation)
// sees it: the verb and the resource, as a SubjectAccessReview names them.

#include <string>

namespace kinformer::apiserver {

// An empty resource: discovery and OpenAPI documents.
struct access_request {
  std::string verb; // get, list, watch; for other methods the HTTP method, lower case
  std::string group, version, resource, namespace_, name;
};

} // namespace kinformer::apiserver
