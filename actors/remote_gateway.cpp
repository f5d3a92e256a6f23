#include "actors/remote_gateway.hpp"

#include "actors/error_bridge.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <deque>
#include <optional>
#include <unordered_map>

namespace kinformer {

namespace {

// The bridge is a handler to the cache and a sender to the remote handler, whose
// acknowledgements come back here.
using bridge_actor =
    caf::typed_actor<caf::reacts_to<atoms::deliver_atom, subscription_id, delta_batch>,
                     caf::reacts_to<atoms::synced_atom, subscription_id>,
                     caf::reacts_to<atoms::ack_atom, subscription_id, std::uint64_t>>;

struct bridge_filter {
  std::string namespace_; // "" = all
  label_selector labels;
  field_selector fields;
  bool include_old_objects = false;

  bool selects(const object_ptr& obj) const {
    if (!obj)
      return false;
    if (!namespace_.empty() && obj->meta().namespace_ != namespace_)
      return false;
    return labels.matches(*obj) && fields.matches(*obj);
  }
};

// What the subscriber sees of a cache delta through the filter, as an API server's filtered
// watch shows it: an object that starts matching is added, one that stops matching is deleted
// in its last matching state, and anything that matches neither before nor after is not seen.
std::optional<wire_delta> project(const delta& d, const bridge_filter& filter) {
  const bool deleted = d.type == delta_type::deleted;
  const bool now = !deleted && filter.selects(d.object);
  // Whether the subscriber holds the object already.
  bool before = false;
  if (deleted)
    before = filter.selects(d.object);
  else if (d.type != delta_type::added)
    before = d.old_object ? filter.selects(d.old_object) : now;
  if (!now && !before)
    return std::nullopt;
  wire_delta w;
  w.initial_list = d.initial_list;
  w.final_state_unknown = d.final_state_unknown;
  if (now && before) {
    w.type = to_string(d.type);
    w.object_json = d.object->to_json();
    if (filter.include_old_objects && d.old_object)
      w.old_object_json = d.old_object->to_json();
  } else if (now) {
    w.type = to_string(delta_type::added);
    w.object_json = d.object->to_json();
  } else {
    w.type = to_string(delta_type::deleted);
    w.object_json = deleted ? d.object->to_json() : d.old_object->to_json();
  }
  return w;
}

struct bridge_state {
  bridge_state() = default; // not an aggregate (see actors/handler.cpp)

  static inline const char* name = "kinformer.remote_bridge";
  remote_handler_actor remote;
  bridge_filter filter;
  ack_receiver_actor upstream; // the cache subscription's relay, learnt from its deliveries
  // Forwarded batches not yet fully acknowledged: (deltas received, deltas forwarded).
  struct in_flight {
    subscription_id upstream_id;
    std::uint64_t received;
    std::uint64_t forwarded;
  };
  std::deque<in_flight> pending;
  std::uint64_t acknowledged = 0; // by the remote handler, not yet matched to a batch
};

using bridge_pointer = bridge_actor::stateful_pointer<bridge_state>;

bridge_actor::behavior_type bridge(bridge_pointer self, remote_handler_actor remote,
                                   bridge_filter filter) {
  self->state.remote = remote;
  self->state.filter = std::move(filter);
  // A subscriber that goes away (disconnect included) ends the bridge; the gateway then ends
  // the cache subscription.
  self->monitor(remote);
  self->set_down_handler([self](const caf::down_msg&) { self->quit(); });
  auto ack_upstream = [self](subscription_id id, std::uint64_t n) {
    self->send(self->state.upstream, atoms::ack_atom::value, id, n);
  };
  return {
      [self, ack_upstream](atoms::deliver_atom, subscription_id id, const delta_batch& batch) {
        auto& st = self->state;
        st.upstream = caf::actor_cast<ack_receiver_actor>(self->current_sender());
        wire_batch out;
        for (const auto& d : batch)
          if (auto w = project(d, st.filter))
            out.push_back(std::move(*w));
        if (out.empty()) {
          ack_upstream(id, batch.size());
          return;
        }
        st.pending.push_back({id, batch.size(), out.size()});
        self->send(st.remote, atoms::remote_deliver_atom::value, id, std::move(out));
      },
      [self](atoms::synced_atom, subscription_id id) {
        self->send(self->state.remote, atoms::synced_atom::value, id);
      },
      [self, ack_upstream](atoms::ack_atom, subscription_id, std::uint64_t n) {
        auto& st = self->state;
        st.acknowledged += n;
        while (!st.pending.empty() && st.pending.front().forwarded <= st.acknowledged) {
          st.acknowledged -= st.pending.front().forwarded;
          ack_upstream(st.pending.front().upstream_id, st.pending.front().received);
          st.pending.pop_front();
        }
      },
  };
}

struct gateway_state;
using gateway_pointer = gateway_actor::stateful_pointer<gateway_state>;

struct gateway_state {
  gateway_state() = default;

  static inline const char* name = "kinformer.remote_gateway";
  cache_actor cache;
  std::string secret;
  struct subscription {
    bridge_actor bridge;
    caf::actor_addr subscriber; // the handler that subscribed: the only one that may unsubscribe
  };
  std::unordered_map<subscription_id, subscription> subscriptions;
};

// Ends subscription `id`: the cache's side and its bridge.
void end_subscription(gateway_pointer self, subscription_id id) {
  auto& st = self->state;
  auto i = st.subscriptions.find(id);
  if (i == st.subscriptions.end())
    return;
  self->send(st.cache, atoms::unsubscribe_atom::value, id);
  self->demonitor(i->second.bridge.address());
  caf::anon_send_exit(i->second.bridge, caf::exit_reason::user_shutdown);
  st.subscriptions.erase(i);
}

// Equal strings, compared without an early exit, so the time taken says nothing about the secret.
// `expected` is not empty.
bool same_secret(const std::string& expected, const std::string& given) {
  std::size_t diff = expected.size() ^ given.size();
  for (std::size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  return diff == 0;
}

gateway_actor::behavior_type gateway(gateway_pointer self, cache_actor cache, std::string secret) {
  self->state.cache = std::move(cache);
  self->state.secret = std::move(secret);
  // A bridge ends when its subscriber goes away (disconnect included): end its subscription.
  // Learnt from a down message, which no peer can forge.
  self->set_down_handler([self](const caf::down_msg& down) {
    for (const auto& [id, sub] : self->state.subscriptions)
      if (sub.bridge.address() == down.source) {
        end_subscription(self, id);
        return;
      }
  });
  return {
      [self](atoms::remote_subscribe_atom, remote_subscription_request& request,
             caf::actor handler) -> caf::result<subscription_id> {
        auto& st = self->state;
        if (!st.secret.empty() && !same_secret(st.secret, request.secret))
          return to_caf_error(
              {errc::invalid_argument, "remote subscription refused: wrong shared secret"});
        if (!handler)
          return to_caf_error({errc::invalid_argument, "remote subscription without a handler"});
        auto labels = label_selector::parse(request.label_selector);
        if (!labels)
          return to_caf_error({errc::invalid_argument, "label selector: " + labels.err().message});
        auto fields = field_selector::parse(request.field_selector);
        if (!fields)
          return to_caf_error({errc::invalid_argument, "field selector: " + fields.err().message});
        bridge_filter filter{request.namespace_, std::move(labels).value(),
                             std::move(fields).value(), request.include_old_objects};
        auto b =
            self->spawn(bridge, caf::actor_cast<remote_handler_actor>(handler), std::move(filter));
        kind_request kind;
        kind.resource = request.resource;
        kind.metadata_only = request.metadata_only;
        subscription_options options;
        options.name = request.name.empty() ? "remote" : "remote:" + request.name;
        options.queue_bound = request.queue_bound;
        options.window = request.window;
        options.max_batch = request.max_batch;
        auto promise = self->make_response_promise<subscription_id>();
        self->request(st.cache, caf::infinite, atoms::subscribe_atom::value, std::move(kind),
                      caf::actor_cast<handler_actor>(b), std::move(options))
            .then(
                [self, b, promise, subscriber = handler.address()](subscription_id id) mutable {
                  self->state.subscriptions.emplace(id, gateway_state::subscription{b, subscriber});
                  self->monitor(b);
                  promise.deliver(id);
                },
                [b, promise](caf::error& err) mutable {
                  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
                  promise.deliver(std::move(err));
                });
        return promise;
      },
      [self](atoms::unsubscribe_atom, subscription_id id) {
        // Only from the handler that subscribed (unsubscribe_remote sends it as that handler):
        // another peer, or an anonymous message, cannot end someone else's subscription.
        auto i = self->state.subscriptions.find(id);
        if (i == self->state.subscriptions.end() || !self->current_sender() ||
            self->current_sender() != i->second.subscriber)
          return;
        end_subscription(self, id);
      },
  };
}

} // namespace

gateway_actor spawn_remote_gateway(caf::actor_system& system, cache_actor cache,
                                   std::string shared_secret) {
  return system.spawn(gateway, std::move(cache), std::move(shared_secret));
}

result<std::uint16_t> publish_gateway(caf::actor_system& system, const gateway_actor& gateway,
                                      const std::string& address, std::uint16_t port, bool tls) {
  const char* in = address.empty() ? nullptr : address.c_str();
  caf::expected<std::uint16_t> published = caf::sec::runtime_error;
  try {
    published = tls ? caf::openssl::publish(gateway, port, in, true)
                    : system.middleman().publish(gateway, port, in, true);
  } catch (const std::exception& e) { // caf::openssl throws on unusable TLS settings
    return error{errc::tls, "cannot publish the remote gateway on " + address + ":" +
                                std::to_string(port) + ": " + e.what()};
  }
  if (!published)
    return error{errc::io, "cannot publish the remote gateway on " + address + ":" +
                               std::to_string(port) + ": " + system.render(published.error())};
  return *published;
}

} // namespace kinformer
