// drop_managed_fields() applied to the text: metadata.managedFields and one comma are left out
// as the object's text is copied, and the result is what the same transform on a tree gives.

#include "protocol/decode.hpp"
#include "protocol/list_decoder.hpp"
#include "protocol/object.hpp"
#include "protocol/transforms.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace kinformer;

namespace {

// The same transform, but not drop_managed_fields()'s own: applied to a tree.
const object_transform* tree_strip() {
  static const auto chained =
      chain_transforms({drop_managed_fields(),
                        std::make_shared<const object_transform>([](boost::json::value&) {})});
  return chained.get();
}

object_ptr cut(std::string_view text) {
  auto obj = object::parse(text, drop_managed_fields().get());
  REQUIRE(obj.ok());
  return *obj;
}

// What a handler reads of an object: its metadata and its tree.
void same_object(const object& a, const object& b) {
  CHECK(a.tree() == b.tree());
  CHECK(a.key() == b.key());
  CHECK(a.kind() == b.kind());
  CHECK(a.api_version() == b.api_version());
  const auto ma = a.meta(), mb = b.meta();
  CHECK(ma.uid == mb.uid);
  CHECK(ma.resource_version == mb.resource_version);
  CHECK(ma.generation == mb.generation);
  CHECK(std::vector(ma.labels.begin(), ma.labels.end()) ==
        std::vector(mb.labels.begin(), mb.labels.end()));
  CHECK(std::vector(ma.annotations.begin(), ma.annotations.end()) ==
        std::vector(mb.annotations.begin(), mb.annotations.end()));
  REQUIRE(ma.owner_references.size() == mb.owner_references.size());
  for (std::size_t i = 0; i < ma.owner_references.size(); ++i)
    CHECK(ma.owner_references[i].uid == mb.owner_references[i].uid);
}

} // namespace

TEST_CASE("drop_managed_fields is one transform, recognised as the text cut") {
  CHECK(drop_managed_fields() == drop_managed_fields());
  CHECK(cuts_managed_fields(drop_managed_fields().get()));
  CHECK_FALSE(cuts_managed_fields(tree_strip()));
  CHECK_FALSE(cuts_managed_fields(nullptr));
}

TEST_CASE("the member is cut out of the text as received, wherever it stands") {
  struct example {
    const char* text;
    const char* kept;
  };
  const example examples[] = {
      // between members: the comma before it goes with it, and the labels after it move back
      {R"({"metadata":{"name":"a","managedFields":[{"manager":"m","fieldsV1":{"f:x":{}}}],)"
       R"("labels":{"app":"web"}},"spec":{"n":1.50}})",
       R"({"metadata":{"name":"a","labels":{"app":"web"}},"spec":{"n":1.50}})"},
      // first: the comma after it goes
      {R"({"metadata":{"managedFields":[],"name":"a","namespace":"d"}})",
       R"({"metadata":{"name":"a","namespace":"d"}})"},
      // alone
      {R"({"metadata":{"managedFields":null},"kind":"X"})", R"({"metadata":{},"kind":"X"})"},
      // last, with whitespace everywhere; the bytes around the cut stay as they were
      {"{ \"metadata\" : { \"name\" : \"a\" ,\n \"managedFields\" : [ 1 , 2 ] \n } , "
       "\"spec\" : {\"x\":\"\\u00e9\"} }",
       "{ \"metadata\" : { \"name\" : \"a\"  \n } , \"spec\" : {\"x\":\"\\u00e9\"} }"},
      // first and followed, with space after the comma and escapes in what follows
      {R"({"metadata":{ "managedFields" : [{"a":"\"]}"}] ,  "name":"a\/b","labels":{"k\/x":"v"}}})",
       R"({"metadata":{ "name":"a\/b","labels":{"k\/x":"v"}}})"},
      // elsewhere than metadata it is data, and stays
      {R"({"metadata":{"name":"a"},"spec":{"managedFields":[1]}})",
       R"({"metadata":{"name":"a"},"spec":{"managedFields":[1]}})"},
      // no metadata at all
      {R"({"kind":"X"})", R"({"kind":"X"})"},
  };
  for (const auto& e : examples) {
    INFO(e.text);
    auto obj = cut(e.text);
    CHECK(obj->json_text() == e.kept);
    auto by_tree = object::parse(e.text, tree_strip());
    REQUIRE(by_tree.ok());
    same_object(*obj, **by_tree);
  }
  auto obj = cut(R"({"metadata":{ "managedFields" : [] ,  "name":"a\/b","labels":{"k\/x":"v"}}})");
  CHECK(obj->meta().name == "a/b");
  CHECK(obj->meta().labels.find("k/x") == "v");
}

TEST_CASE("the cut costs the object the member's bytes and keeps every metadata view right") {
  const std::string member =
      R"("managedFields":[{"manager":"kubelet","fieldsV1":{"f:status":{}}}])";
  const std::string text =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns","uid":"u",)" +
      member +
      R"(,"resourceVersion":"7","labels":{"b":"2","a":"1"},"annotations":{"n":"x"},)"
      R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"o",)"
      R"("controller":true}]},"status":{"phase":"Running"}})";
  auto whole = object::parse(text);
  REQUIRE(whole.ok());
  auto obj = cut(text);
  CHECK(obj->json_text().size() == text.size() - member.size() - 1);
  CHECK((*whole)->heap_bytes() - obj->heap_bytes() >= member.size());
  CHECK(obj->key() == "ns/p");
  CHECK(obj->meta().resource_version == "7");
  CHECK(obj->meta().labels.find("a") == "1");
  CHECK(obj->meta().annotations.find("n") == "x");
  REQUIRE(obj->meta().owner_references.size() == 1);
  CHECK(obj->meta().owner_references[0].uid == "o");
  CHECK(obj->field("status.phase") == "Running");
  CHECK(obj->partial_metadata_json().find("managedFields") == std::string::npos);
}

TEST_CASE("a text the cut cannot simply shorten goes through a tree") {
  // Given twice: the tree keeps the last and the transform erases it, so neither stays.
  auto twice = cut(R"({"metadata":{"managedFields":[1],"name":"a","managedFields":[2]}})");
  CHECK(twice->json_text() == R"({"metadata":{"name":"a"}})");
  // A key that may be managedFields written with escapes: the tree reads it as that name.
  auto escaped = cut(R"({"metadata":{"managedFi\u0065lds":[1],"name":"a"}})");
  CHECK(escaped->json_text() == R"({"metadata":{"name":"a"}})");
  auto both = cut(R"({"metadata":{"managedFields":[1],"name":"a","m\u0061nagedFields":[2]}})");
  CHECK(both->json_text() == R"({"metadata":{"name":"a"}})");
  auto in_watch = decode_watch_event(
      R"({"type":"ADDED","object":{"metadata":{"name":"a","managedFi\u0065lds":[]}}})",
      decode_options{drop_managed_fields().get(), nullptr});
  REQUIRE(in_watch.ok());
  CHECK(in_watch->object->json_text() == R"({"metadata":{"name":"a"}})");
  // An escape elsewhere in the metadata: the cut is still exact, through the tree or not.
  auto other = cut(R"({"metadata":{"name":"a","annotations":{"n":"\u00e9"},"managedFields":[]}})");
  CHECK(other->tree() ==
        boost::json::parse(R"({"metadata":{"name":"a","annotations":{"n":"é"}}})"));
  // Bad text is the same error either way.
  CHECK(object::parse(R"({"metadata":{"managedFields":[1,]}})", drop_managed_fields().get())
            .err()
            .code == errc::invalid_json);
  CHECK(object::parse(R"({"metadata":{"managedFields":[],"name":3}})", drop_managed_fields().get())
            .err()
            .code == errc::invalid_object);
}

TEST_CASE("list items and watch events are cut as they are decoded") {
  const decode_options options{drop_managed_fields().get(), nullptr};
  // PodList items name no type: the list's goes in front, and the cut still lands right.
  const std::string body =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[)"
      R"({"metadata":{"name":"a","namespace":"d","managedFields":[{"manager":"m"}],)"
      R"("labels":{"x":"1"}}},)"
      R"({"metadata":{"managedFields":[],"name":"b","namespace":"d"},"spec":{}}]})";
  for (std::size_t piece : {std::size_t{7}, body.size()}) {
    INFO("fed in pieces of " << piece);
    list_decoder decoder(options);
    std::vector<object_ptr> items;
    for (std::size_t at = 0; at < body.size(); at += piece)
      REQUIRE(decoder.feed(std::string_view(body).substr(at, piece), items).ok());
    REQUIRE(decoder.finish(items).ok());
    REQUIRE(items.size() == 2);
    CHECK(items[0]->json_text() ==
          R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"d",)"
          R"("labels":{"x":"1"}}})");
    CHECK(items[0]->meta().labels.find("x") == "1");
    CHECK(items[0]->kind() == "Pod");
    CHECK(items[1]->json_text() ==
          R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","namespace":"d"},"spec":{}})");
    CHECK(items[1]->key() == "d/b");
  }

  auto event = decode_watch_event(
      R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a",)"
      R"("namespace":"d","resourceVersion":"10","managedFields":[{"manager":"m"}]},"spec":{}}})",
      options);
  REQUIRE(event.ok());
  CHECK(event->object->json_text() ==
        R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"d",)"
        R"("resourceVersion":"10"},"spec":{}})");
  CHECK(event->object->meta().resource_version == "10");
}
