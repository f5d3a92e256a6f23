#include "actors/cache_client.hpp"

#include "actors/actor_system_setup.hpp"
#include "actors/cache.hpp"
#include "actors/error_bridge.hpp"
#include "actors/foreign_thread_scope.hpp"
#include "actors/handler.hpp"

#include <caf/all.hpp>

#include <condition_variable>
#include <mutex>

namespace kinformer {

struct event_registration::state {
  caf::actor handler;
  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  bool synced = false;
};

bool event_registration::has_synced() const {
  if (!state_)
    return false;
  std::lock_guard lock(state_->mutex);
  return state_->synced;
}

bool event_registration::wait_for_sync(std::chrono::milliseconds timeout) const {
  if (!state_)
    return false;
  std::unique_lock lock(state_->mutex);
  return state_->changed.wait_for(lock, timeout, [this] { return state_->synced; });
}

struct cache_client::impl {
  // Owned only by the first constructor; destroyed in reverse order (cache, then system).
  std::unique_ptr<caf::actor_system_config> owned_config;
  std::unique_ptr<caf::actor_system> owned_system;
  caf::actor_system* system = nullptr;
  cache_actor cache;
  cache_client_options settings;

  ~impl() {
    if (owned_system) {
      // The cache stops its informers and relays when it exits; the system's destructor
      // waits for all of them.
      caf::anon_send_exit(cache, caf::exit_reason::user_shutdown);
      cache = nullptr;
      owned_system.reset();
    }
  }

  // One request with a timeout, answered as a result (CAF and cache errors mapped back).
  template <class T, class... Ts>
  result<T> ask(std::chrono::milliseconds timeout, Ts&&... xs) const {
    foreign_thread_scope any_thread; // the caller's thread may outlive the actor system
    caf::scoped_actor self{*system};
    std::optional<result<T>> out;
    self->request(cache, timeout, std::forward<Ts>(xs)...)
        .receive([&](T& value) { out.emplace(std::move(value)); },
                 [&](caf::error& err) { out.emplace(from_caf_error(err)); });
    return std::move(*out);
  }
};

cache_client::cache_client(std::shared_ptr<api_client> client, cache_options options,
                           cache_client_options settings)
    : impl_(std::make_unique<impl>()) {
  foreign_thread_scope any_thread; // the facade may be destroyed on another thread
  impl_->owned_config = std::make_unique<caf::actor_system_config>();
  configure_actor_system(*impl_->owned_config, settings.threads);
  impl_->owned_system = std::make_unique<caf::actor_system>(*impl_->owned_config);
  impl_->system = impl_->owned_system.get();
  impl_->cache = spawn_cache(*impl_->system, std::move(client), std::move(options));
  impl_->settings = settings;
}

cache_client::cache_client(caf::actor_system& system, const caf::actor& cache,
                           cache_client_options settings)
    : impl_(std::make_unique<impl>()) {
  impl_->system = &system;
  impl_->cache = caf::actor_cast<cache_actor>(cache);
  impl_->settings = settings;
}

cache_client::cache_client(cache_client&&) noexcept = default;
cache_client& cache_client::operator=(cache_client&&) noexcept = default;
cache_client::~cache_client() = default;

std::chrono::milliseconds cache_client::effective(milliseconds timeout) const {
  return timeout < milliseconds::zero() ? impl_->settings.timeout : timeout;
}

result<object_ptr> cache_client::get(const kind_request& kind, const std::string& namespace_,
                                     const std::string& name, milliseconds timeout) const {
  return impl_->ask<object_ptr>(effective(timeout), atoms::get_atom::value,
                                cache_get_request{kind, namespace_, name});
}

result<object_list> cache_client::list(const kind_request& kind, const list_options& options,
                                       milliseconds timeout) const {
  return impl_->ask<object_list>(effective(timeout), atoms::list_atom::value,
                                 cache_list_request{kind, options});
}

result<kind_informers> cache_client::get_informer(const kind_request& kind,
                                                  milliseconds timeout) const {
  auto set = impl_->ask<informer_set>(effective(timeout), atoms::get_informer_atom::value, kind);
  if (!set)
    return std::move(set).err();
  kind_informers out;
  out.kind = kind;
  for (const auto& handle : *set)
    out.namespaces.push_back(handle.namespace_);
  out.handles = std::make_shared<const informer_set>(std::move(set).value());
  return out;
}

status_result cache_client::wait_for_cache_sync(milliseconds timeout) const {
  auto synced = impl_->ask<bool>(effective(timeout), atoms::wait_sync_atom::value);
  if (!synced)
    return std::move(synced).err();
  if (!*synced)
    return make_error(errc::cancelled, "the cache stopped before its informers synced");
  return ok_v;
}

result<bool> cache_client::remove_informer(const kind_request& kind, milliseconds timeout) const {
  return impl_->ask<bool>(effective(timeout), atoms::remove_informer_atom::value, kind);
}

status_result cache_client::index_field(const kind_request& kind, const std::string& field_path,
                                        milliseconds timeout) const {
  auto added =
      impl_->ask<bool>(effective(timeout), atoms::index_field_atom::value, kind, field_path);
  if (!added)
    return std::move(added).err();
  if (!*added)
    return make_error(errc::invalid_argument, "the cache refused the index on " + field_path);
  return ok_v;
}

result<event_registration> cache_client::add_event_handler(const kind_request& kind,
                                                           handler_callbacks callbacks,
                                                           subscription_options options,
                                                           milliseconds timeout) const {
  // Starting the informers first turns an unknown kind into an error here, rather than into a
  // handler that terminates on its own.
  auto started = get_informer(kind, timeout);
  if (!started)
    return std::move(started).err();
  event_registration registration;
  registration.state_ = std::make_shared<event_registration::state>();
  // The handler holds the state weakly: a dropped registration must not keep it alive. The
  // user's callback runs first, so has_synced() implies it has returned.
  auto on_synced = [weak = std::weak_ptr<event_registration::state>(registration.state_),
                    user = std::move(callbacks.on_synced)] {
    if (user)
      user();
    if (auto st = weak.lock()) {
      std::lock_guard lock(st->mutex);
      st->synced = true;
      st->changed.notify_all();
    }
  };
  callbacks.on_synced = std::move(on_synced);
  foreign_thread_scope any_thread;
  auto handler =
      spawn_handler(*impl_->system, impl_->cache, kind, std::move(callbacks), std::move(options));
  registration.state_->handler = caf::actor_cast<caf::actor>(handler);
  return registration;
}

status_result cache_client::remove_event_handler(const event_registration& registration,
                                                 milliseconds timeout) const {
  if (!registration.state_ || !registration.state_->handler)
    return make_error(errc::invalid_argument, "not a registration from add_event_handler");
  foreign_thread_scope any_thread;
  caf::scoped_actor self{*impl_->system};
  const auto& handler = registration.state_->handler;
  self->monitor(handler);
  // The handler unsubscribes from the cache as it terminates.
  self->send_exit(handler, caf::exit_reason::user_shutdown);
  bool stopped = false;
  self->receive([&](const caf::down_msg&) { stopped = true; },
                caf::after(effective(timeout)) >> [] {});
  if (!stopped)
    return make_error(errc::timeout, "the event handler did not stop in time");
  return ok_v;
}

result<cache_stats> cache_client::stats(milliseconds timeout) const {
  return impl_->ask<cache_stats>(effective(timeout), atoms::stats_atom::value);
}

} // namespace kinformer
