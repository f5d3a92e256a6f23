#include "actors/controller/leader_elector.hpp"

#include "protocol/http/api_client.hpp"
#include "protocol/resource_writer.hpp"

#include <caf/all.hpp>

#include <random>

namespace kinformer {
namespace {

using clock = leader_election::clock;

const group_version_resource leases_resource{"coordination.k8s.io", "v1", "leases"};

struct elector_state {
  elector_state() = default; // not an aggregate (CAF would construct it from the pointer)

  static inline const char* name = "kinformer.leader_elector";

  std::shared_ptr<api_client> client;
  leader_elector_options options;
  caf::actor listener;
  std::unique_ptr<leader_election> election;
  std::uint64_t attempt = 0;
  bool busy = false;                    // a read or write of this attempt is outstanding
  std::optional<lease_write> in_flight; // the write of this attempt
  bool leading = false;                 // as last told to the listener
  std::optional<caf::typed_response_promise<bool>> releasing;
  leader_election_status status;
  std::minstd_rand jitter{std::random_device{}()};
};

using elector_pointer = leader_elector_actor::stateful_pointer<elector_state>;

std::string lease_path(const leader_elector_options& o, bool with_name) {
  return resource_writer::object_path({leases_resource, o.lease_namespace},
                                      with_name ? o.lease_name : std::string());
}

// The next attempt: a leader renews every retry period; a candidate waits a jittered period
// (client-go's JitterUntil, factor 1.2), so candidates do not move in step.
void schedule(elector_pointer self) {
  auto& st = self->state;
  auto wait = st.options.timings.retry_period;
  if (!st.leading) {
    std::uniform_real_distribution<double> extra(0.0, 1.2);
    wait += std::chrono::duration_cast<std::chrono::milliseconds>(wait * extra(st.jitter));
  }
  self->delayed_send(self, wait, atoms::timer_atom::value);
}

// Tells the listener when leadership changed.
void settle(elector_pointer self) {
  auto& st = self->state;
  bool now_leading = st.election->leading(clock::now());
  st.status.holder = st.election->holder();
  st.status.transitions = st.election->transitions();
  if (now_leading == st.leading)
    return;
  st.leading = now_leading;
  st.status.leading = now_leading;
  ++(now_leading ? st.status.leadership_won : st.status.leadership_lost);
  caf::anon_send(st.listener, atoms::leading_atom::value, now_leading);
}

// The callback that brings a response back to the elector, on the client's I/O thread, as
// (atom, attempt, HTTP code or 0 for a transport failure, body or error message).
template <class Atom>
get_callback reply_to(elector_pointer self, Atom atom) {
  leader_elector_actor me = self;
  return [me, atom, attempt = self->state.attempt](result<http_response> r) {
    std::int32_t code = r ? r->status_code : 0;
    std::string body = r ? std::move(r->body) : r.err().message;
    caf::anon_send(me, atom, attempt, code, std::move(body));
  };
}

void send_write(elector_pointer self, lease_write w) {
  auto& st = self->state;
  write_request request;
  request.verb = w.create ? api_verb::create : api_verb::update;
  request.target = lease_path(st.options, !w.create);
  request.body = w.body(st.options.lease_namespace, st.options.lease_name);
  st.in_flight = std::move(w);
  st.client->write(request, reply_to(self, atoms::written_atom::value));
}

void start_attempt(elector_pointer self) {
  auto& st = self->state;
  if (st.busy)
    return;
  st.busy = true;
  ++st.attempt;
  st.client->get(lease_path(st.options, true), "application/json",
                 reply_to(self, atoms::get_atom::value));
}

void fail_attempt(elector_pointer self, std::string error) {
  auto& st = self->state;
  st.status.last_error = std::move(error);
  st.busy = false;
  st.in_flight.reset();
  settle(self); // a leader that cannot renew stops leading once its renew deadline passed
}

void on_read(elector_pointer self, std::int32_t code, const std::string& body) {
  auto& st = self->state;
  std::optional<observed_lease> lease;
  if (code == 200) {
    lease = parse_lease(body);
    if (!lease)
      return fail_attempt(self, "the Lease " + st.options.lease_name + " is no Lease");
  } else if (code != 404) {
    return fail_attempt(self, "reading the Lease: " +
                                  (code == 0 ? body : "HTTP " + std::to_string(code)));
  }
  auto w = st.election->decide(lease, clock::now());
  if (!w) {
    st.busy = false;
    settle(self);
    return;
  }
  send_write(self, std::move(*w));
}

void on_written(elector_pointer self, std::int32_t code, const std::string& body) {
  auto& st = self->state;
  if (code / 100 != 2 || !st.in_flight)
    return fail_attempt(self, "writing the Lease: " +
                                  (code == 0 ? body : "HTTP " + std::to_string(code)));
  auto written = parse_lease(body);
  st.election->written(*st.in_flight, written ? written->resource_version : std::string(),
                       clock::now());
  st.in_flight.reset();
  st.busy = false;
  settle(self);
}

void finish_release(elector_pointer self, bool released) {
  auto& st = self->state;
  st.releasing->deliver(released);
  st.releasing.reset();
  if (st.leading)
    caf::anon_send(st.listener, atoms::leading_atom::value, false);
  self->quit();
}

leader_elector_actor::behavior_type elector_behavior(elector_pointer self,
                                                     std::shared_ptr<api_client> client,
                                                     leader_elector_options options,
                                                     caf::actor listener) {
  auto& st = self->state;
  st.client = std::move(client);
  st.listener = std::move(listener);
  st.election = std::make_unique<leader_election>(options.identity, options.timings);
  st.status.identity = options.identity;
  st.options = std::move(options);
  self->send(self, atoms::timer_atom::value);
  return {
      [self](atoms::timer_atom) {
        if (self->state.releasing)
          return;
        settle(self);
        start_attempt(self);
        schedule(self);
      },
      [self](atoms::get_atom, std::uint64_t attempt, std::int32_t code, const std::string& body) {
        if (attempt == self->state.attempt && !self->state.releasing)
          on_read(self, code, body);
      },
      [self](atoms::written_atom, std::uint64_t attempt, std::int32_t code,
             const std::string& body) {
        auto& st = self->state;
        if (attempt != st.attempt)
          return;
        if (st.releasing)
          return finish_release(self, code / 100 == 2);
        on_written(self, code, body);
      },
      [self](atoms::release_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.releasing = self->make_response_promise<bool>();
        auto promise = *st.releasing;
        auto w = st.election->release(clock::now());
        if (!w) {
          finish_release(self, false);
          return promise;
        }
        ++st.attempt; // whatever was outstanding no longer counts
        send_write(self, std::move(*w));
        return promise;
      },
      [self](atoms::stats_atom) { return self->state.status; },
  };
}

} // namespace

leader_elector_actor spawn_leader_elector(caf::actor_system& system,
                                          std::shared_ptr<api_client> client,
                                          leader_elector_options options, caf::actor listener) {
  return system.spawn(elector_behavior, std::move(client), std::move(options), std::move(listener));
}

} // namespace kinformer
