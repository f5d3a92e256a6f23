#pragma once
// The simulator's backend of the one API-server front end (app/apiserver/api_frontend.hpp): gets,
// lists and watches answered by the storage, and what only the simulator serves: writes (create,
// update, patch, delete, deletecollection, with dryRun, fieldManager and force), TokenReview and
// SubjectAccessReview, and the static bearer token (or a verified client certificate) it admits.
// Writes answer in the shape Accept asks for, as reads do. Answers are made on the I/O thread
// that read the request (a Table of 100,000 pods takes about a second there;
// simulator_options::io_threads gives the server more).

#include <chrono>
#include <memory>

#include "app/apiserver/api_backend.hpp"
#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"

namespace kinformer::sim {

class storage_backend final : public apiserver::api_backend {
public:
  // Both must outlive the backend.
  storage_backend(storage& store, const simulator_options& options);

  std::vector<apiserver::resource_info> resources() const override;
  std::string git_version() const override;
  void admit(const apiserver::http_request& request, const apiserver::access_request& wanted,
             std::shared_ptr<apiserver::http_exchange> exchange, apiserver::admitted next) override;
  void get(apiserver::resource_request request, apiserver::get_done done) override;
  void list(apiserver::resource_request request, apiserver::list_done done) override;
  void watch(apiserver::resource_request request,
             std::shared_ptr<apiserver::http_exchange> exchange) override;
  bool writable() const override { return true; }
  void write(const apiserver::http_request& request, const apiserver::request_target& target,
             const apiserver::resource_path& path,
             std::shared_ptr<apiserver::http_exchange> exchange) override;

  // Watches set up and being served: their replay is written and every later event goes through
  // the stream's bounded queue.
  std::size_t live_watches() const;
  // Waits until live_watches() is `count`; false if `timeout` passed first.
  bool wait_for_live_watches(std::size_t count, std::chrono::milliseconds timeout) const;

private:
  struct watch_count;
  storage& store_;
  const simulator_options& options_;
  // Shared with the watches' end callbacks, which may run after this backend is gone.
  std::shared_ptr<watch_count> live_watches_;
};

} // namespace kinformer::sim
