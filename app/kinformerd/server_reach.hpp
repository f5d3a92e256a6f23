#pragma once
// Start-up against an API server that is not there yet (a control-plane upgrade or restart):
// what one attempt to reach it means. client-go-based controllers keep retrying with backoff in
// this state; kinformerd does the same, and reports not ready until the server answers.

#include "protocol/http/api_client.hpp"
#include "protocol/result.hpp"

#include <optional>
#include <string>

namespace kinformer::service {

struct reach_outcome {
  enum class what {
    answered, // go on
    retry,    // the server is away or overloaded: try again after a backoff
    refused,  // it will not work by waiting: start-up fails
  };
  what outcome = what::answered;
  std::optional<error> failure; // why not answered (for the log, /readyz, or start-up's error)
};

// What the answer to GET /version, or the failure to get one, means: no connection, a timeout,
// 429 or 5xx are retried; rejected credentials and TLS failures are refused.
reach_outcome reach_from_version(const result<http_response>& answer);

// What a failed start-up step means: the server went away during it (retry), or it said no.
reach_outcome reach_from_failure(const error& failure);

} // namespace kinformer::service
