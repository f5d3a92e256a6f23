#include "protocol/object.hpp"
#include "protocol/object_scan.hpp"
#include "protocol/object_scan_validate.hpp"
#include "protocol/transforms.hpp"
#include "tests/protocol/support/scan_description.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace kinformer;

// Labels as a comparable list (object_meta holds a view into the object).
using label_list = std::vector<std::pair<std::string_view, std::string_view>>;

namespace {
const char* pod_json = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {
    "name": "web-1", "namespace": "default", "uid": "u-1", "resourceVersion": "42",
    "generation": 3,
    "labels": {"app": "web", "tier": "front"},
    "annotations": {"note": "x"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                         "uid": "rs-1", "controller": true}],
    "managedFields": [{"manager": "kubectl"}]
  },
  "spec": {"nodeName": "node-a", "replicas": 2, "paused": false},
  "status": {"phase": "Running"}
})";
}

TEST_CASE("an object reads its metadata once, as views into its own JSON") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  const auto& m = (*obj)->meta();
  CHECK((*obj)->kind() == "Pod");
  CHECK((*obj)->api_version() == "v1");
  CHECK((*obj)->key() == "default/web-1");
  CHECK(m.uid == "u-1");
  CHECK(m.resource_version == "42");
  CHECK(m.generation == 3);
  CHECK(m.label("app") == "web");
  CHECK(m.label("tier") == "front");
  CHECK_FALSE(m.label("missing").has_value());
  CHECK(m.annotation("note") == "x");
  REQUIRE(m.owner_references.size() == 1);
  CHECK(m.owner_references[0].kind == "ReplicaSet");
  CHECK(m.owner_references[0].controller);
  CHECK(m.deletion_timestamp.empty());
}

TEST_CASE("field values read dotted paths as strings") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  CHECK(field_value(**obj, "status.phase") == "Running");
  CHECK(field_value(**obj, "spec.nodeName") == "node-a");
  CHECK(field_value(**obj, "spec.replicas") == "2");
  CHECK(field_value(**obj, "spec.paused") == "false");
  CHECK(field_value(**obj, "metadata.name") == "web-1");
  CHECK_FALSE(field_value(**obj, "spec.missing").has_value());
  CHECK_FALSE(field_value(**obj, "spec").has_value());
}

TEST_CASE("a transform runs before the object is frozen") {
  object_transform drop_managed_fields = [](boost::json::value& v) {
    v.as_object()["metadata"].as_object().erase("managedFields");
  };
  auto obj = object::parse(pod_json, &drop_managed_fields);
  REQUIRE(obj.ok());
  CHECK((*obj)->tree().at("metadata").as_object().count("managedFields") == 0);
  CHECK((*obj)->meta().name == "web-1");

  boost::json::value v = boost::json::parse(pod_json);
  auto moved = object::from_json(v, &drop_managed_fields);
  REQUIRE(moved.ok());
  CHECK((*moved)->tree().at("metadata").as_object().count("managedFields") == 0);
}

TEST_CASE("ready-made transforms drop managedFields and annotations, and chain in order") {
  CHECK(chain_transforms({}) == nullptr);
  CHECK(chain_transforms({nullptr, nullptr}) == nullptr);
  const auto strip = drop_managed_fields();
  CHECK(chain_transforms({nullptr, strip}) == strip); // one left: itself

  auto both = chain_transforms({drop_annotations({"a/drop", "b/drop"}), strip});
  REQUIRE(both);
  auto obj =
      object::parse(R"({"metadata":{"name":"x","namespace":"d","managedFields":[{"manager":"m"}],)"
                    R"("annotations":{"a/drop":"1","keep":"2"}}})",
                    both.get());
  REQUIRE(obj.ok());
  CHECK((*obj)->json_text() ==
        R"({"metadata":{"name":"x","namespace":"d","annotations":{"keep":"2"}}})");

  auto emptied =
      object::parse(R"({"metadata":{"name":"y","annotations":{"b/drop":"1"}}})", both.get());
  REQUIRE(emptied.ok());
  CHECK((*emptied)->json_text() == R"({"metadata":{"name":"y"}})");
}

TEST_CASE("bad input is a clear error, never a crash") {
  CHECK(object::parse("{").err().code == errc::invalid_json);
  CHECK(object::parse("[]").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": 3})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": {"name": 3}})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": {"labels": {"a": 1}}})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"metadata": {"generation": "x"}})").err().code == errc::invalid_object);
  CHECK(object::parse(R"({"kind": 5})").err().code == errc::invalid_object);
}

TEST_CASE("the metadata-only projection keeps metadata and drops the rest") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  auto partial = (*obj)->to_partial_metadata();
  CHECK(partial->kind() == "PartialObjectMetadata");
  CHECK(partial->api_version() == "meta.k8s.io/v1");
  CHECK(partial->key() == "default/web-1");
  CHECK(partial->meta().label("app") == "web");
  CHECK(partial->tree().as_object().count("spec") == 0);
}

TEST_CASE("objects copied from a value own their storage") {
  object_ptr obj;
  {
    boost::json::value v = boost::json::parse(pod_json);
    auto r = object::from_json(v);
    REQUIRE(r.ok());
    obj = *r;
  }
  CHECK(obj->meta().label("app") == "web");
  CHECK(obj->heap_bytes() > 100);
  CHECK(boost::json::parse(obj->to_json()) == boost::json::parse(pod_json));
}

TEST_CASE("an object is the bytes it was made from, and its metadata are views into them") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  const std::string_view text = (*obj)->text_in_place();
  CHECK(text == pod_json); // byte for byte, whitespace included
  auto inside = [&](std::string_view v) {
    return v.data() >= text.data() && v.data() + v.size() <= text.data() + text.size();
  };
  const auto& m = (*obj)->meta();
  CHECK(inside(m.name));
  CHECK(inside(m.namespace_));
  CHECK(inside(m.resource_version));
  CHECK(inside(m.labels[0].first));
  CHECK(inside(m.labels[0].second));
  CHECK(inside((*obj)->kind()));
  // The text is kept once, not a tree of it: a few hundred bytes beyond the text.
  CHECK((*obj)->heap_bytes() < text.size() + 1024);
}

TEST_CASE("metadata strings with escapes are decoded") {
  auto obj =
      object::parse(R"({"kind":"Pod","metadata":{"name":"a\u0062c","labels":{"k\"ey":"v\\al"},)"
                    R"("annotations":{"n":"\u00e9t\u00e9"}}})");
  REQUIRE(obj.ok());
  CHECK((*obj)->meta().name == "abc");
  CHECK((*obj)->meta().label("k\"ey") == "v\\al");
  CHECK((*obj)->meta().annotation("n") == "\xc3\xa9t\xc3\xa9");
  CHECK((*obj)->key() == "abc");
}

TEST_CASE("the whole text is validated, not only the metadata") {
  for (const char* bad : {R"({"a":tru})", R"({"a":1,})", R"({"a":"\q"})", R"({"a":1} x)",
                          R"({"a":[1,2})", "{\"a\":\"x\x01\"}", R"({"a":1)", R"({"a":01})",
                          "{\"a\":\"\xff\"}", R"({"metadata":{"name":"x"},"spec":{"x":nul}})",
                          // Found by fuzzing: structure after a plain string went unchecked.
                          R"({"":"":}})", R"({"a":"b":"c"}})", R"({"metadata":{"name":"x":"y"}}})",
                          R"({"metadata":{"labels":{"a":"b":1}}}})",
                          // Found by fuzzing: an exponent object::tree() cannot read.
                          R"({"a":4e-99999999999})"}) {
    INFO(bad);
    auto r = object::parse(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::invalid_json);
  }
  // Valid JSON that no 64-bit integer holds is still valid.
  CHECK(object::parse(R"({"a":123456789012345678901234567890})").ok());
  CHECK(object::parse(R"({"a":4e-400,"b":1E+2147483647})").ok() ==
        false); // 1e2147483647 is out of a double's range: simdjson refuses it
  CHECK((*object::parse(R"({"a":4e-400})"))->tree().at("a").as_double() == 0.0);
}

TEST_CASE("the fast path reads what the full walk reads, and fails where it fails") {
  const std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"prod",)"
      R"("uid":"u-1","resourceVersion":"42","generation":3,"labels":{"app":"web","x\"y":"a\\b"},)"
      R"("annotations":{"note":"caf\u00e9"},"ownerReferences":[{"apiVersion":"apps/v1",)"
      R"("kind":"ReplicaSet","name":"web","uid":"u-0","controller":true,"blockOwnerDeletion":true,)"
      R"("extra":[1,{"a":null}]}],"managedFields":[{"manager":"m","fieldsV1":{"f:metadata":)"
      R"({"k:{\"uid\":\"u-0\"}":{}}},"time":"2026-01-01T00:00:00Z"}],)"
      R"("deletionTimestamp":"2026-01-02T00:00:00Z"},"spec":{"containers":[{"name":"c",)"
      R"("ports":[{"containerPort":8080,"weight":0.5,"big":-12345678901234}]}]},)"
      R"("status":{"phase":"Running","ok":true,"none":null}})";
  const std::vector<std::string> texts = {
      pod,
      " \n" + pod + "\t ",
      "{}",
      R"({"spec":{}})",
      R"({"metadata":null})",
      R"({"metadata":{}})",
      R"({"spec":{"a":1},"metadata":{"name":"late"},"kind":"K"})",
      R"({"kind":"A","kind":"B","metadata":{"name":"x"},"metadata":{"name":"y"}})",
      R"({"kin\u0064":"escaped key","kind":"K","metadata":{"nam\u0065":"z","name":"n"}})",
      R"({"metadata":{"name":"x","name":null,"labels":{"a":"1","a":"2"},"labels":null}})",
      R"({"metadata":{"generation":null,"ownerReferences":null,"annotations":{}}})",
      R"({"apiVersion":"v1","metadata":{"name":"x"},"spec":{"zero":0.0,"tiny":4e-400}})",
      R"({"metadata":{"name":"x","ownerReferences":[{"controller":"yes","name":"o"}]}})",
      // Integers at the edges of 64 bits, and a negative zero.
      R"({"metadata":{"generation":9223372036854775807}})",
      R"({"metadata":{"generation":-9223372036854775808}})",
      R"({"metadata":{"generation":-0,"name":"z"}})",
      // managedFields first, last, alone, repeated, and around whitespace.
      R"({"metadata":{"managedFields":[{"manager":"m"}],"name":"a"}})",
      R"({"metadata":{"name":"a","managedFields":[{"manager":"m"}]}})",
      R"({"metadata":{"managedFields":[]}})",
      R"({"metadata":{"managedFields":null,"name":"a","managedFields":[{"a":[1,{}]}]}})",
      " { \"metadata\" : { \"name\" : \"a\" ,\n \"managedFields\" : [ { } ] ,\t"
      "\"uid\" : \"u\" } , \"kind\" : \"K\" } ",
      // Escapes in keys and values that are recorded: kubectl apply's annotation among them.
      R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":)"
      R"("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n"},"labels":{"a\\b\"c":"\ud83d\ude00"}}})",
      R"({"kind":"P\u006fd","metadata":{"name":"\/x","namespace":"\t","uid":"\"",)"
      R"("ownerReferences":[{"k\u0069nd":"x","kind":"R\u0053","name":"o"}]}})",
      // What the read skips: empty and nested containers, every kind of scalar.
      R"({"spec":{"a":[],"b":{},"c":[[{}],{"d":[]}],"e":[true,false,null,-1.5e-3,"s"]},)"
      R"("metadata":{"x":[{"y":{}}],"labels":{},"name":"n"},"status":[]})",
      R"({"kind":null,"apiVersion":null,"metadata":{"name":null,"ownerReferences":[]}})",
      R"({"metadata":{"ownerReferences":[{},{"controller":false,"blockOwnerDeletion":true}]}})",
      // Wrong metadata types: the fast read fails, the walk says why.
      R"({"metadata":{"name":1}})",
      R"({"metadata":[]})",
      R"({"kind":{},"metadata":{}})",
      R"({"metadata":{"labels":{"a":1}}})",
      R"({"metadata":{"ownerReferences":[1]}})",
      R"({"metadata":{"generation":"1"}})",
      R"({"metadata":{"generation":1.5}})",
      R"({"metadata":{"generation":1e3}})",
      R"({"metadata":{"generation":9223372036854775808}})",
      R"({"metadata":{"generation":-9223372036854775809}})",
      R"({"metadata":{"generation":true}})",
      R"({"metadata":{"annotations":{"a":null}}})",
      R"({"metadata":{"ownerReferences":{}}})",
      R"({"metadata":{"ownerReferences":[{"name":2}]}})",
      R"({"kind":"K","apiVersion":7,"metadata":{}})",
      R"({"metadata":"x"})",
      // Not JSON, or not an object.
      R"({"a":4e-99999999999})",
      // Past simdjson's slow path's exponent cap, some 65,000 digits offset an exponent Boost.JSON
      // refuses into a double that is not zero: too large for the fast path.
      R"({"a":1)" + std::string(65299, '0') + "e-6553600000}",
      R"({"metadata":{"name":"x"}} x)",
      R"({"a":"b":"c"}})",
      "[1]",
      "\"text\"",
  };
  for (const auto& text : texts) {
    INFO(text);
    CHECK(testing::object_scans_differ(text) == "");
  }
}

TEST_CASE("the fast path is taken for a usual object and left for what the walk must judge") {
  const std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},)"
      R"("spec":{"priority":0,"weight":0.5,"ok":true,"none":null,"ports":[{"p":-80}]}})";
  CHECK(validate_object_fast(pod)->type_and_metadata_members == 3);
  CHECK(validate_object_fast(R"({"kind":"A","kind":"B","spec":{}})")->type_and_metadata_members ==
        2);
  CHECK(validate_object_fast("{}")->type_and_metadata_members == 0);
  CHECK(validate_fast(R"({"type":"ADDED","object":{"metadata":{}}})"));
  // The positions the read goes by: every structural character and scalar, then the size.
  const std::string small = R"( {"a": [1, "b"], "c" :null})";
  const auto positions = validate_fast(small);
  REQUIRE(positions);
  CHECK(std::vector<std::uint32_t>(positions->begin(), positions->end()) ==
        std::vector<std::uint32_t>{1, 2, 5, 7, 8, 9, 11, 14, 15, 17, 21, 22, 26, 27});
  // Numbers both read alike: a zero, and an integer beyond 64 bits (a double to both).
  CHECK(validate_object_fast(R"({"a":0.0})"));
  CHECK(validate_object_fast(R"({"a":123456789012345678901234567890})"));
  for (const std::string& doubt :
       {std::string(R"({"a":123456789012345678901234567890123})"), // over 32 characters
        std::string(R"({"a":4e-400})"), std::string(R"({"a":"\ud800"})"),
        std::string(R"({"a":1,})"), std::string("[1]"),
        R"({"a":")" + std::string(32 * 1024, 'x') + R"("})"}) {
    INFO(doubt.substr(0, 80));
    CHECK_FALSE(validate_object_fast(doubt));
  }
}

TEST_CASE("a watch line's fast path reads what the full walk reads, and fails where it fails") {
  const std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"d",)"
      R"("resourceVersion":"7","labels":{"a":"b"}},"spec":{"n":1}})";
  const std::vector<std::string> lines = {
      R"({"type":"ADDED","object":)" + pod + "}",
      R"({"object":)" + pod + R"(,"type":"MODIFIED"})",
      R"({"type":"DELETED","object":{"kind":"Pod"},"object":)" + pod + "}",
      R"({"type":"ADDED","object":)" + pod + R"(,"object":[1]})",
      R"({"type":1,"object":)" + pod + "}",
      R"({"type":"A","type":null,"object":{}})",
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}})",
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}},"extra":{"x":[0.5]}})",
      R"({"type":"ADDED","object":{"metadata":{"name":2}}})",
      R"({"type":"ADDED","object":{"metadata":{"labels":{"a":1}}}})",
      R"({"type":"ADDED","object":{"metadata":{"name":"x"}} )",
      R"({"type":"ADDED","object":{"a":0.0}})",
      R"({"type":"ADD\u0045D","object":)" + pod + "}",
      R"({"type":"ADDED","type":{"a":[]},"object":)" + pod + "}",
      R"({"type":"ADDED","object":)" + pod + R"(,"object":null})",
      R"({"type":"ADDED","object":[],"object":)" + pod + "}",
      R"({"type":"ADDED","object":{}})",
      R"({"type":"ADDED","object":{"metadata":{"annotations":{"a":"\"q\""}}}})",
      R"({"type":"ADDED","object":{"metadata":{"generation":0.5}}})",
      R"({"type":"ADDED"})",
      R"({})",
      R"("ADDED")",
      R"(["ADDED"])",
  };
  for (const auto& line : lines) {
    INFO(line);
    CHECK(testing::watch_line_scans_differ(line) == "");
  }
}

TEST_CASE("a key given twice keeps its last value, whole, as Boost.JSON's tree has it") {
  // Found by fuzzing: an escaped first value outlived a plain second one.
  auto a = object::parse(R"({"metadata":{"name":"\t","name":""}})");
  REQUIRE(a.ok());
  CHECK((*a)->meta().name.empty());
  auto b = object::parse(R"({"kind":"A","kind":"B","metadata":{"name":"x","labels":{"a":"1"},)"
                         R"("generation":3,"ownerReferences":[{"name":"o","controller":true}]},)"
                         R"("metadata":{"name":"y","labels":{"b":"2"},"labels":{"c":"3"}}})");
  REQUIRE(b.ok());
  const auto& m = (*b)->meta();
  CHECK((*b)->kind() == "B");
  CHECK(m.name == "y");
  CHECK(m.generation == 0);
  CHECK(m.owner_references.empty());
  CHECK(label_list(m.labels.begin(), m.labels.end()) == label_list{{"c", "3"}});
  auto c = object::parse(R"({"metadata":{"name":"x","name":null,"labels":{"a":"1","a":"2"}}})");
  REQUIRE(c.ok());
  CHECK((*c)->meta().name.empty());
  const auto& c_labels = (*c)->meta().labels;
  CHECK(label_list(c_labels.begin(), c_labels.end()) == label_list{{"a", "2"}});
}

TEST_CASE("list items that name no type get the list's") {
  item_type pod{"Pod", "v1"};
  auto filled = object::parse(R"({"metadata":{"name":"a","namespace":"n"}})", nullptr, &pod);
  REQUIRE(filled.ok());
  CHECK((*filled)->kind() == "Pod");
  CHECK((*filled)->api_version() == "v1");
  CHECK((*filled)->meta().name == "a");
  CHECK(boost::json::parse((*filled)->to_json()).at("kind") == "Pod");
  // Every range moved with the inserted type: views and the metadata text still line up.
  CHECK((*filled)->key() == "n/a");
  CHECK((*filled)->to_partial_metadata()->json_text() ==
        R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1",)"
        R"("metadata":{"name":"a","namespace":"n"}})");
  auto own = object::parse(R"({"kind":"Widget","apiVersion":"example.com/v1","metadata":{}})",
                           nullptr, &pod);
  REQUIRE(own.ok());
  CHECK((*own)->kind() == "Widget");
  auto empty = object::parse("{}", nullptr, &pod);
  REQUIRE(empty.ok());
  CHECK((*empty)->json_text() == R"({"kind":"Pod","apiVersion":"v1"})");
}

TEST_CASE("labels are sorted with the last of a repeated key kept, short maps and long alike") {
  for (int count : {3, 32, 33, 200}) {
    std::string text = R"({"metadata":{"name":"x","labels":{)";
    for (int i = count - 1; i >= 0; --i)
      text += "\"k" + std::to_string(1000 + i) + "\":\"first\",";
    text += R"("k1000":"last"}}})";
    auto obj = object::parse(text);
    REQUIRE(obj.ok());
    const auto& labels = (*obj)->meta().labels;
    REQUIRE(labels.size() == static_cast<std::size_t>(count));
    CHECK(std::is_sorted(labels.begin(), labels.end()));
    CHECK((*obj)->meta().label("k1000") == "last");
    CHECK((*obj)->meta().label(std::to_string(count - 1 + 1000).insert(0, "k")) == "first");
  }
}

TEST_CASE("a filled-in type, escapes and owner references share the object's one allocation") {
  item_type pod{"Pod", "v1"};
  auto obj = object::parse(R"({"metadata":{"name":"a\u0062","namespace":"n\u0073",)"
                           R"("labels":{"l":"v\u0031"},"ownerReferences":[{"kind":"R",)"
                           R"("name":"o","uid":"u","controller":true}]}})",
                           nullptr, &pod);
  REQUIRE(obj.ok());
  CHECK((*obj)->kind() == "Pod");
  CHECK((*obj)->key() == "ns/ab");
  CHECK((*obj)->meta().label("l") == "v1");
  REQUIRE((*obj)->meta().owner_references.size() == 1);
  const owner_reference& owner = (*obj)->meta().owner_references[0];
  CHECK(owner.kind == "R");
  CHECK(owner.name == "o");
  CHECK(owner.controller);
  // One block: every view lies within heap_bytes() of the object.
  const char* begin = reinterpret_cast<const char*>(obj->get());
  auto inside = [&](std::string_view v) {
    return v.data() >= begin && v.data() + v.size() <= begin + (*obj)->heap_bytes();
  };
  CHECK(inside((*obj)->key()));
  CHECK(inside((*obj)->text_in_place()));
  CHECK(inside(owner.name));
  CHECK(inside((*obj)->meta().labels[0].second));
}

TEST_CASE("metadata views and iterators stay valid after the object_meta that made them") {
  auto obj = object::parse(pod_json);
  REQUIRE(obj.ok());
  // meta() is made on each call: what it hands out points into the object, not into it.
  const string_map_view labels = (*obj)->meta().labels;
  const auto first = (*obj)->meta().labels.begin();
  const auto last = (*obj)->meta().labels.end();
  REQUIRE(last - first == 2);
  CHECK((*first).first == "app");
  CHECK(first[1] == std::pair<std::string_view, std::string_view>("tier", "front"));
  CHECK(labels.find("app") == "web");
  CHECK_FALSE(labels.find("absent"));
  CHECK(label_list(first, last) == label_list{{"app", "web"}, {"tier", "front"}});
  const owner_reference_list owners = (*obj)->meta().owner_references;
  REQUIRE(owners.size() == 1);
  CHECK((*owners.begin()).uid == "rs-1");
  // An empty string is an empty view, present or not.
  auto bare = object::parse(R"({"metadata":{"name":"","labels":{"k":""}}})");
  REQUIRE(bare.ok());
  CHECK((*bare)->meta().name.empty());
  CHECK((*bare)->meta().label("k") == "");
  CHECK((*bare)->key().empty());
}
