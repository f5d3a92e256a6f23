#pragma once
// The simulator's TokenReview and SubjectAccessReview (POST
// /apis/authentication.k8s.io/v1/tokenreviews and /apis/authorization.k8s.io/v1/
// subjectaccessreviews), from a fixed table: who each token is, and what each user or group may
// do. What kinformerd's read API asks a real API server, as kube-rbac-proxy does.

#include "app/kubesim/storage.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kinformer::sim {

struct review_user {
  std::string token;
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
};

// Allows `verbs` on `resources` ("*": any) in `namespace_` ("": every namespace) to `subject`: a
// user name, or "group:NAME" for every member of a group.
struct review_grant {
  std::string subject;
  std::vector<std::string> verbs;
  std::vector<std::string> resources;
  std::string namespace_;
};

// The TokenReview answer for a request body: authenticated with the token's user, or not.
api_result<std::string> token_review(std::string_view body, const std::vector<review_user>& users);
// The SubjectAccessReview answer for a request body: allowed when a grant covers it.
api_result<std::string> subject_access_review(std::string_view body,
                                              const std::vector<review_grant>& grants);

} // namespace kinformer::sim
