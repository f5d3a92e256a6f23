#include "app/kinformerd/server_reach.hpp"

namespace kinformer::service {

namespace {

reach_outcome retry(error failure) {
  return {reach_outcome::what::retry, std::move(failure)};
}

reach_outcome refused(error failure) {
  return {reach_outcome::what::refused, std::move(failure)};
}

} // namespace

reach_outcome reach_from_failure(const error& failure) {
  if (failure.code == errc::io || failure.code == errc::timeout)
    return retry(failure);
  return refused(failure);
}

reach_outcome reach_from_version(const result<http_response>& answer) {
  if (!answer)
    return reach_from_failure(answer.err());
  const int code = answer->status_code;
  const std::string said = "GET /version: HTTP " + std::to_string(code);
  if (code == 429 || code / 100 == 5)
    return retry({errc::status, said});
  if (code == 401)
    return refused(
        {errc::credentials, said + ": the API server does not accept kinformerd's credentials"});
  // Any other answer comes from a server that is up; discovery says what else is wrong.
  return {};
}

} // namespace kinformer::service
