// The selection projection shared by the simulator's watches and the read API: which event a
// narrowed watch is sent for each change, and the version stamp of a stopped-matching DELETED;
// and the watch lines both frame their events in, whose objects are the stored bytes themselves.

#include "app/apiserver/watch_event.hpp"
#include "app/apiserver/watch_projection.hpp"
#include "app/apiserver/watch_shaper.hpp"
#include "protocol/object.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace kinformer;
using namespace kinformer::apiserver;

TEST_CASE("project_change follows the watch cache's table") {
  using p = watch_projection;
  // Additions and deletions: as they are, when the object matches.
  CHECK(project_change(event_type::added, true, false) == p::as_is);
  CHECK(project_change(event_type::added, false, false) == p::none);
  CHECK(project_change(event_type::deleted, true, false) == p::as_is);
  CHECK(project_change(event_type::deleted, false, true) == p::none);
  // Modifications: by the states before and after.
  CHECK(project_change(event_type::modified, true, true) == p::as_is);
  CHECK(project_change(event_type::modified, true, false) == p::started_matching);
  CHECK(project_change(event_type::modified, false, true) == p::stopped_matching);
  CHECK(project_change(event_type::modified, false, false) == p::none);

  CHECK(projected_type(p::as_is, event_type::modified) == event_type::modified);
  CHECK(projected_type(p::started_matching, event_type::modified) == event_type::added);
  CHECK(projected_type(p::stopped_matching, event_type::modified) == event_type::deleted);
}

TEST_CASE("with_resource_version replaces the version's bytes and nothing else") {
  const std::string text =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default",)"
      R"("resourceVersion":"17","labels":{"resourceVersion":"17"}},"spec":{"x":"17"}})";
  auto obj = object::parse(text);
  REQUIRE(obj.ok());
  const std::string stamped = with_resource_version(**obj, "12345");
  CHECK(stamped ==
        R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default",)"
        R"("resourceVersion":"12345","labels":{"resourceVersion":"17"}},"spec":{"x":"17"}})");
  auto reparsed = object::parse(stamped);
  REQUIRE(reparsed.ok());
  CHECK((*reparsed)->meta().resource_version == "12345");
  CHECK((*reparsed)->meta().label("resourceVersion") == "17");
}

TEST_CASE("watch event lines and bookmark objects are framed as the API server frames them") {
  CHECK(apiserver::watch_event_line(event_type::modified, R"({"a":1})") ==
        "{\"type\":\"MODIFIED\",\"object\":{\"a\":1}}\n");
  CHECK(apiserver::bookmark_object("Pod", "v1", "12", false) ==
        R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12",)"
        R"("creationTimestamp":null}})");
  auto end = boost::json::parse(apiserver::bookmark_object("Deployment", "apps/v1", "7", true));
  CHECK(end.at("metadata").at("annotations").at("k8s.io/initial-events-end") == "true");
  CHECK(end.at("apiVersion") == "apps/v1");
}

TEST_CASE("a watch event in pieces is the line, its object the stored bytes, kept by their owner") {
  const std::string text =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default",)"
      R"("resourceVersion":"5"}})";
  for (auto type : {event_type::added, event_type::modified, event_type::deleted,
                    event_type::bookmark, event_type::error}) {
    auto obj = object::parse(text);
    REQUIRE(obj.ok());
    const char* stored = (*obj)->text_in_place().data();
    auto pieces = watch_event_pieces(type, *obj, (*obj)->text_in_place());
    obj = object::parse("{}"); // the pieces' owner alone keeps the object now
    CHECK(pieces.joined() == watch_event_line(type, text));
    CHECK(pieces.size() == watch_event_line(type, text).size());
    REQUIRE(pieces.pieces().size() == 3);
    CHECK(pieces.pieces()[1].bytes.data() == stored); // not a copy
    CHECK(pieces.pieces()[1].owner != nullptr);
    CHECK(pieces.pieces()[0].owner == nullptr); // the literal head and tail
    CHECK(pieces.pieces()[2].owner == nullptr);
  }
}

TEST_CASE("the watch shaper serves a stored object's own bytes, and shaped ones as one piece") {
  auto obj = object::parse(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default",)"
      R"("resourceVersion":"5","labels":{"app":"web"}},"spec":{}})");
  REQUIRE(obj.ok());
  resource_request request;
  request.info.kind = "Pod";
  watch_shaper as_stored(request, false);
  auto line = as_stored.event_line(event_type::added, *obj);
  CHECK(line.joined() == watch_event_line(event_type::added, (*obj)->text_in_place()));
  REQUIRE(line.pieces().size() == 3);
  CHECK(line.pieces()[1].bytes.data() == (*obj)->text_in_place().data());

  resource_request partial = request;
  partial.shape = response_shape::partial_metadata;
  watch_shaper metadata(partial, false);
  auto cut = metadata.event_line(event_type::added, *obj);
  REQUIRE(cut.pieces().size() == 1);
  auto event = boost::json::parse(cut.joined());
  CHECK(event.at("object").at("kind") == "PartialObjectMetadata");

  // A change that leaves the selection is a DELETED of the old object at the new version.
  resource_request selected = request;
  auto web = label_selector::parse("app=web");
  REQUIRE(web.ok());
  selected.query.labels = *web;
  watch_shaper narrowed(selected, false);
  auto moved = object::parse(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default",)"
      R"("resourceVersion":"6","labels":{"app":"db"}},"spec":{}})");
  REQUIRE(moved.ok());
  auto left = boost::json::parse(narrowed.change_line(event_type::modified, *moved, *obj).joined());
  CHECK(left.at("type") == "DELETED");
  CHECK(left.at("object").at("metadata").at("resourceVersion") == "6");
  CHECK(left.at("object").at("metadata").at("labels").at("app") == "web");
  CHECK(narrowed.change_line(event_type::modified, *moved, *moved).empty());

  // Without the state before (a queue keeps only states in the selection): a modified object
  // that matches now entered the selection; with no selector to leave, it was in it already.
  auto back =
      boost::json::parse(narrowed.change_line(event_type::modified, *obj, nullptr).joined());
  CHECK(back.at("type") == "ADDED");
  auto as_is =
      boost::json::parse(as_stored.change_line(event_type::modified, *moved, nullptr).joined());
  CHECK(as_is.at("type") == "MODIFIED");
}
