#pragma once
// A value or an error: what every fallible protocol function returns.
// Nothing in protocol/ throws past its API; failures come back as an `error`.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kinformer {

enum class errc {
  invalid_json,     // not JSON, or truncated
  invalid_object,   // JSON, but not the shape we expect (wrong types, missing fields)
  invalid_argument, // bad input from a caller (selector syntax, config, flags)
  status,           // the server answered with a Kubernetes Status failure
  io,               // connection refused, reset, closed mid-stream
  tls,              // handshake or certificate verification failed
  timeout,
  too_large, // a line or body over its configured limit
  not_found, // a file, key or resource that does not exist
  no_match,  // the REST mapper knows no such kind or resource
  cancelled,
  // Cache reads the cache cannot serve, each fixable in its own way (controller-runtime's
  // ErrResourceNotCached, its unknown-namespace error, "index does not exist"). Appended last:
  // the numeric values cross process boundaries (actors/error_bridge.hpp).
  not_cached,            // the kind has no informer, and the cache may not start one
  namespace_not_covered, // the namespace is outside the namespaces the cache watches
  no_index,              // a field selector needs an index nobody added
  // A resourceVersion older than the history kept for it: the reader must relist (the API
  // server's 410 Expired / "too old resource version").
  expired,
  // No usable credentials: an exec credential plugin failed, or printed nothing usable.
  credentials,
  // Writes the API server refused for the object's state (409): another writer changed it
  // since it was read (Conflict: read again and retry), or it exists already (AlreadyExists).
  conflict,
  already_exists,
};
inline constexpr errc last_errc = errc::already_exists; // keep in step when appending

const char* to_string(errc code) noexcept;

struct error {
  errc code;
  std::string message;

  // A single line suitable for logs: "invalid_json: unexpected end at offset 12".
  std::string describe() const { return std::string(to_string(code)) + ": " + message; }
};

template <class T>
class [[nodiscard]] result {
public:
  result(T value) : state_(std::move(value)) {}
  result(error err) : state_(std::move(err)) {}

  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const error& err() const& {
    assert(!ok());
    return std::get<1>(state_);
  }
  error&& err() && {
    assert(!ok());
    return std::get<1>(std::move(state_));
  }

private:
  std::variant<T, error> state_;
};

// For operations that produce nothing but may fail.
struct ok_t {};
inline constexpr ok_t ok_v{};
using status_result = result<ok_t>;

inline error make_error(errc code, std::string message) {
  return error{code, std::move(message)};
}

} // namespace kinformer
