// leader_election: client-go's tryAcquireOrRenew decisions, with the time passed in.

#include "actors/controller/leader_election.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace kinformer;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

using time_point = leader_election::time_point;
const time_point t0 = time_point{} + std::chrono::seconds(1795640400);

leader_election_timings client_go_timings() {
  return {};
} // 15 s, 10 s, 2 s

// The Lease as the server would answer after `w` was written at version `rv`.
observed_lease stored(const lease_write& w, std::string rv) {
  return {w.spec, std::move(rv)};
}

observed_lease held_by(std::string holder, std::int64_t transitions = 3) {
  observed_lease l;
  l.spec.holder_identity = std::move(holder);
  l.spec.lease_duration_seconds = 15;
  l.spec.acquire_time = "2026-11-25T20:00:00.000000Z";
  l.spec.renew_time = "2026-11-25T21:00:00.000000Z";
  l.spec.lease_transitions = transitions;
  l.resource_version = "10";
  return l;
}

} // namespace

TEST_CASE("leader_election: with no Lease, the candidate creates one naming itself and leads") {
  leader_election e("pod-a", client_go_timings());
  auto w = e.decide(std::nullopt, t0);
  REQUIRE(w);
  CHECK(w->create);
  CHECK(w->spec.holder_identity == "pod-a");
  CHECK(w->spec.lease_duration_seconds == 15);
  CHECK(w->spec.acquire_time == "2026-11-25T21:00:00.000000Z");
  CHECK(w->spec.renew_time == w->spec.acquire_time);
  CHECK(w->spec.lease_transitions == 0);
  CHECK_FALSE(e.leading(t0));
  e.written(*w, "1", t0);
  CHECK(e.leading(t0));
  CHECK(e.holder() == "pod-a");
}

TEST_CASE("leader_election: a leader renews, keeping acquireTime and transitions, and stops "
          "leading once it has not renewed for the renew deadline") {
  leader_election e("pod-a", client_go_timings());
  auto created = e.decide(std::nullopt, t0);
  e.written(*created, "1", t0);
  auto renew = e.decide(stored(*created, "1"), t0 + 2s);
  REQUIRE(renew);
  CHECK_FALSE(renew->create);
  CHECK(renew->resource_version == "1");
  CHECK(renew->spec.acquire_time == created->spec.acquire_time);
  CHECK(renew->spec.renew_time == "2026-11-25T21:00:02.000000Z");
  CHECK(renew->spec.lease_transitions == 0);
  e.written(*renew, "2", t0 + 2s);
  CHECK(e.leading(t0 + 11s));
  CHECK_FALSE(e.leading(t0 + 12s)); // 10 s after the last renewal
}

TEST_CASE("leader_election: another's Lease is left alone while fresh by this candidate's clock, "
          "and taken over, one transition more, once it has not changed for its duration") {
  leader_election e("pod-b", client_go_timings());
  auto lease = held_by("pod-a");
  CHECK_FALSE(e.decide(lease, t0));
  CHECK(e.holder() == "pod-a");
  CHECK_FALSE(e.decide(lease, t0 + 14s));
  // The holder renews: the record changed, so it is fresh again from now.
  lease.spec.renew_time = "2026-11-25T21:00:14.000000Z";
  lease.resource_version = "11";
  CHECK_FALSE(e.decide(lease, t0 + 14s));
  CHECK_FALSE(e.decide(lease, t0 + 28s));
  auto takeover = e.decide(lease, t0 + 29s);
  REQUIRE(takeover);
  CHECK_FALSE(takeover->create);
  CHECK(takeover->resource_version == "11");
  CHECK(takeover->spec.holder_identity == "pod-b");
  CHECK(takeover->spec.lease_transitions == 4);
  CHECK(takeover->spec.acquire_time == "2026-11-25T21:00:29.000000Z");
  e.written(*takeover, "12", t0 + 29s);
  CHECK(e.leading(t0 + 29s));
}

TEST_CASE("leader_election: a released Lease (no holder) is taken at once, release hands on "
          "only a Lease this candidate leads with") {
  leader_election a("pod-a", client_go_timings());
  CHECK_FALSE(a.release(t0));
  auto created = a.decide(std::nullopt, t0);
  a.written(*created, "1", t0);
  auto release = a.release(t0 + 1s);
  REQUIRE(release);
  CHECK(release->spec.holder_identity.empty());
  CHECK(release->spec.lease_duration_seconds == 1);
  CHECK(release->resource_version == "1");
  auto body = json::parse(release->body("kube-system", "kinformerd")).as_object();
  CHECK(!body.at("spec").as_object().contains("holderIdentity"));
  CHECK(body.at("metadata").at("resourceVersion") == "1");

  leader_election b("pod-b", client_go_timings());
  auto takeover = b.decide(stored(*release, "2"), t0 + 1s);
  REQUIRE(takeover);
  CHECK(takeover->spec.holder_identity == "pod-b");
  CHECK(takeover->spec.lease_transitions == 1);
}

TEST_CASE("leader_election: a Lease's JSON is read back as written, other JSON is no Lease") {
  lease_write w;
  w.create = true;
  w.spec = held_by("pod-a").spec;
  auto body = w.body("kube-system", "kinformerd");
  auto tree = json::parse(body).as_object();
  CHECK(tree.at("apiVersion") == "coordination.k8s.io/v1");
  CHECK(tree.at("metadata").at("name") == "kinformerd");
  CHECK(tree.at("metadata").at("namespace") == "kube-system");
  CHECK(!tree.at("metadata").as_object().contains("resourceVersion"));
  auto back = parse_lease(body);
  REQUIRE(back);
  CHECK(back->spec == w.spec);
  CHECK_FALSE(parse_lease(R"({"kind":"ConfigMap"})"));
  CHECK_FALSE(parse_lease("not json"));
}
