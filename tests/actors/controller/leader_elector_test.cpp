// Leader electors against the simulator: one leader at a time, hand-over when the leader dies
// (the Lease expires) or releases it (at once), leadership lost when renewals fail and won back.
// Short timings (lease 1 s, renew deadline 600 ms, retry 50 ms) keep it quick; every wait is
// for a message, with a generous timeout.

#include "actors/controller/leader_elector.hpp"

#include "app/kubesim/storage.hpp"
#include "tests/support/sim_actor_fixture.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

using namespace kinformer;
using namespace std::chrono_literals;

namespace {

const group_version_resource leases_gvr{"coordination.k8s.io", "v1", "leases"};

struct candidate {
  std::unique_ptr<caf::scoped_actor> listener; // receives (leading_atom, bool)
  leader_elector_actor elector;
};

struct fixture : kinformer::testing::sim_actor_fixture {
  candidate start(const std::string& identity) {
    candidate c;
    c.listener = std::make_unique<caf::scoped_actor>(*system);
    leader_elector_options o;
    o.lease_namespace = "kube-system";
    o.lease_name = "kinformerd";
    o.identity = identity;
    o.timings = {1000ms, 600ms, 50ms};
    c.elector = spawn_leader_elector(*system, client, o, caf::actor_cast<caf::actor>(*c.listener));
    spawned.push_back(caf::actor_cast<caf::actor>(c.elector));
    return c;
  }

  // The next leadership change `c` is told about.
  static bool next_change(candidate& c) {
    bool leading = false;
    (*c.listener)
        ->receive([&](atoms::leading_atom, bool now) { leading = now; },
                  caf::after(std::chrono::seconds(20)) >> [] { FAIL("no leadership change"); });
    return leading;
  }

  leader_election_status status(candidate& c) {
    leader_election_status out;
    (*c.listener)
        ->request(c.elector, 10s, atoms::stats_atom::value)
        .receive([&](const leader_election_status& s) { out = s; },
                 [&](caf::error& err) { FAIL(system->render(err)); });
    return out;
  }

  observed_lease lease() {
    auto stored = server.store().get(leases_gvr, "kube-system", "kinformerd");
    REQUIRE(stored.ok());
    auto parsed = parse_lease(stored->object->to_json());
    REQUIRE(parsed);
    return *parsed;
  }
};

} // namespace

TEST_CASE_METHOD(fixture, "leader elector: the first candidate leads, when it dies the Lease "
                          "expires and the other takes over") {
  auto a = start("pod-a");
  REQUIRE(next_change(a));
  CHECK(lease().spec.holder_identity == "pod-a");
  CHECK(lease().spec.lease_transitions == 0);

  auto b = start("pod-b");
  // b follows: it has seen a hold the Lease.
  caf::scoped_actor self{*system};
  // Kill a without a release, as a killed process would.
  self->send_exit(a.elector, caf::exit_reason::kill);
  REQUIRE(next_change(b));
  auto now = lease();
  CHECK(now.spec.holder_identity == "pod-b");
  CHECK(now.spec.lease_transitions == 1);
  auto s = status(b);
  CHECK(s.leading);
  CHECK(s.leadership_won == 1);
  CHECK(s.holder == "pod-b");
}

TEST_CASE_METHOD(fixture, "leader elector: a release hands the Lease on at once and tells the "
                          "listener") {
  auto a = start("pod-a");
  REQUIRE(next_change(a));
  auto b = start("pod-b");

  bool released = false;
  (*a.listener)
      ->request(a.elector, 10s, atoms::release_atom::value)
      .receive([&](bool r) { released = r; }, [&](caf::error& err) { FAIL(system->render(err)); });
  CHECK(released);
  CHECK_FALSE(next_change(a));
  REQUIRE(next_change(b));
  CHECK(lease().spec.holder_identity == "pod-b");
  CHECK(lease().spec.lease_transitions == 1);
}

TEST_CASE_METHOD(fixture, "leader elector: a leader whose renewals fail stops leading after the "
                          "renew deadline, and leads again once it can write") {
  auto a = start("pod-a");
  REQUIRE(next_change(a));
  server.store().fail_next_writes(1000000, 500);
  CHECK_FALSE(next_change(a));
  CHECK(status(a).last_error.find("HTTP 500") != std::string::npos);
  server.store().fail_next_writes(0, 500);
  REQUIRE(next_change(a));
  auto s = status(a);
  CHECK(s.leadership_won == 2);
  CHECK(s.leadership_lost == 1);
  CHECK(lease().spec.lease_transitions == 0); // it never changed hands
}
