// Objects kept compressed: a dictionary trained on an informer's first objects, then every object
// made after keeps its text compressed with it, and gives back the same bytes and the same
// metadata as the object kept as it is.

#include "protocol/decode.hpp"
#include "protocol/object.hpp"
#include "protocol/object_packer.hpp"
#include "protocol/text_dictionary.hpp"
#include "protocol/transforms.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

using namespace kinformer;

namespace {

// A pod of a workload, as a ReplicaSet's pods are: alike but for their names, uids, versions,
// times and addresses.
std::string pod_text(int i, bool with_type = true) {
  const std::string n = std::to_string(i);
  std::string text = with_type ? R"({"kind":"Pod","apiVersion":"v1",)" : "{";
  text +=
      R"("metadata":{"name":"web-7d9f8-)" + n + R"(","generateName":"web-7d9f8-",)" +
      R"("namespace":"shop","uid":"0f8e1a2b-)" + n + R"(-4c5d-9e8f-1a2b3c4d5e6f",)" +
      R"("resourceVersion":")" + std::to_string(1000 + i) + R"(","generation":1,)" +
      R"("creationTimestamp":"2026-11-30T10:)" + n + R"(:00Z",)" +
      R"("labels":{"app":"web","pod-template-hash":"7d9f8","tier":"front"},)" +
      R"("annotations":{"prometheus.io/scrape":"true","kubectl.kubernetes.io/restartedAt":"2026-11-29T08:00:00Z"},)" +
      R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9f8",)" +
      R"("uid":"aa11bb22-cc33-dd44-ee55-ff6677889900","controller":true,"blockOwnerDeletion":true}],)" +
      R"("managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",)" +
      R"("time":"2026-11-30T10:)" + n +
      R"(:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},)" +
      R"("f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{}},)" +
      R"("f:ownerReferences":{".":{},"k:{\"uid\":\"aa11bb22\"}":{}}},"f:spec":{"f:containers":{}}}}]},)" +
      R"("spec":{"nodeName":"node-)" + std::to_string(i % 7) +
      R"(","containers":[{"name":"web","image":"registry.example/web:1.4.2",)" +
      R"("ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"256Mi"}}}]},)" +
      R"("status":{"phase":"Running","podIP":"10.244.)" + std::to_string(i % 250) + "." +
      std::to_string(i % 199) + R"("}})";
  return text;
}

object_ptr make(std::string_view text, object_packer* packer = nullptr,
                const object_transform* transform = nullptr) {
  auto obj = object::parse(text, transform, nullptr, nullptr, packer);
  REQUIRE(obj);
  return std::move(obj).value();
}

// A packer whose dictionary is trained from `samples` pods (numbered from 10,000).
std::shared_ptr<object_packer> trained_packer(int samples = 16) {
  auto packer = std::make_shared<object_packer>(packer_options{std::size_t(samples), 1 << 20});
  for (int i = 0; i < samples; ++i)
    CHECK_FALSE(make(pod_text(10000 + i), packer.get())->packed());
  REQUIRE(packer->dictionary());
  return packer;
}

// Decoding that packs with `packer`.
decode_options packing_with(object_packer& packer) {
  decode_options options;
  options.packer = &packer;
  return options;
}

// Everything a reader can ask of an object but its memory, the same for both.
void check_same(const object& packed, const object& plain) {
  CHECK(packed.json_text() == plain.to_json());
  CHECK(packed.to_json() == plain.to_json());
  CHECK(packed.text_size() == plain.text_size());
  CHECK(packed.key() == plain.key());
  CHECK(packed.kind() == plain.kind());
  CHECK(packed.api_version() == plain.api_version());
  const auto a = packed.meta(), b = plain.meta();
  CHECK(a.namespace_ == b.namespace_);
  CHECK(a.name == b.name);
  CHECK(a.uid == b.uid);
  CHECK(a.resource_version == b.resource_version);
  CHECK(a.generation == b.generation);
  CHECK(a.deletion_timestamp == b.deletion_timestamp);
  REQUIRE(a.labels.size() == b.labels.size());
  for (std::size_t i = 0; i < a.labels.size(); ++i) {
    CHECK(a.labels[i].first == b.labels[i].first);
    CHECK(a.labels[i].second == b.labels[i].second);
  }
  REQUIRE(a.annotations.size() == b.annotations.size());
  for (std::size_t i = 0; i < a.annotations.size(); ++i) {
    CHECK(a.annotations[i].first == b.annotations[i].first);
    CHECK(a.annotations[i].second == b.annotations[i].second);
  }
  REQUIRE(a.owner_references.size() == b.owner_references.size());
  for (std::size_t i = 0; i < a.owner_references.size(); ++i) {
    CHECK(a.owner_references[i].name == b.owner_references[i].name);
    CHECK(a.owner_references[i].uid == b.owner_references[i].uid);
    CHECK(a.owner_references[i].kind == b.owner_references[i].kind);
    CHECK(a.owner_references[i].api_version == b.owner_references[i].api_version);
    CHECK(a.owner_references[i].controller == b.owner_references[i].controller);
  }
  CHECK(packed.field("spec.nodeName") == plain.field("spec.nodeName"));
  CHECK(packed.field("status.phase") == plain.field("status.phase"));
  CHECK(packed.tree() == plain.tree());
  CHECK(packed.partial_metadata_json() == plain.partial_metadata_json());
  CHECK(packed.resource_version_at() == plain.resource_version_at());
}

} // namespace

TEST_CASE("a dictionary compresses a text and gives back the same bytes") {
  std::vector<std::string> samples;
  for (int i = 0; i < 64; ++i)
    samples.push_back(pod_text(i));
  auto dictionary = text_dictionary::train(samples);
  REQUIRE(dictionary);
  CHECK(dictionary->bytes() > 0);
  CHECK(dictionary->bytes() <= text_dictionary::capacity);

  const std::string text = pod_text(500);
  std::string packed;
  REQUIRE(dictionary->compress(text, packed));
  CHECK(packed.size() * 4 < text.size()); // what the pods share is in the dictionary
  std::string back(text.size(), '\0');
  REQUIRE(dictionary->decompress(packed, back.data(), back.size()));
  CHECK(back == text);

  SECTION("bytes it did not make, or the wrong size, are refused") {
    std::string wrong(text.size() + 1, '\0');
    CHECK_FALSE(dictionary->decompress(packed, wrong.data(), wrong.size()));
    CHECK_FALSE(
        dictionary->decompress(packed.substr(0, packed.size() / 2), back.data(), back.size()));
    CHECK_FALSE(dictionary->decompress("not zstd at all", back.data(), back.size()));
  }
}

TEST_CASE("too few samples to train from make a dictionary of their own text") {
  const std::vector<std::string> samples{pod_text(1), pod_text(2)};
  auto dictionary = text_dictionary::train(samples);
  REQUIRE(dictionary);
  CHECK_FALSE(dictionary->trained());
  const std::string text = pod_text(3);
  std::string packed, back(text.size(), '\0');
  REQUIRE(dictionary->compress(text, packed));
  CHECK(packed.size() * 2 < text.size());
  REQUIRE(dictionary->decompress(packed, back.data(), back.size()));
  CHECK(back == text);
  CHECK_FALSE(text_dictionary::train({}));
}

TEST_CASE("a packer keeps its first objects as they are, then packs every one after") {
  object_packer packer(packer_options{4, 1 << 20});
  for (int i = 0; i < 4; ++i) {
    CHECK_FALSE(packer.dictionary());
    CHECK_FALSE(make(pod_text(i), &packer)->packed());
  }
  REQUIRE(packer.dictionary());
  for (int i = 4; i < 20; ++i) {
    const std::string text = pod_text(i);
    auto packed = make(text, &packer);
    CHECK(packed->packed());
    CHECK(packed->json_text() == text);
    CHECK(packed->text_in_place().empty());
    check_same(*packed, *make(text));
  }
}

TEST_CASE("a packed object takes less memory than the same object kept as it is") {
  auto packer = trained_packer();
  const std::string text = pod_text(42);
  auto packed = make(text, packer.get());
  auto plain = make(text);
  REQUIRE(packed->packed());
  CHECK(packed->heap_bytes() * 2 < plain->heap_bytes());
}

TEST_CASE("packed objects made through a cut, a type filled in, escapes and a watch line") {
  auto packer = trained_packer();

  SECTION("managedFields cut as the text is copied") {
    const auto cut = drop_managed_fields();
    const std::string text = pod_text(7);
    auto packed = make(text, packer.get(), cut.get());
    REQUIRE(packed->packed());
    check_same(*packed, *make(text, nullptr, cut.get()));
    CHECK(packed->to_json().find("managedFields") == std::string::npos);
  }
  SECTION("a type filled in for an item that names none") {
    const std::string text = pod_text(8, false);
    const item_type pod{"Pod", "v1"};
    auto packed = object::parse(text, nullptr, &pod, nullptr, packer.get());
    auto plain = object::parse(text, nullptr, &pod);
    REQUIRE(packed);
    REQUIRE(plain);
    REQUIRE((*packed)->packed());
    CHECK((*packed)->kind() == "Pod");
    CHECK((*packed)->api_version() == "v1");
    check_same(**packed, **plain);
  }
  SECTION("strings written with escapes") {
    std::string text = pod_text(9);
    const std::string plain_label = R"("tier":"front")";
    text.replace(text.find(plain_label), plain_label.size(), R"("tier":"fr\u006fnt\"s")");
    auto packed = make(text, packer.get());
    REQUIRE(packed->packed());
    check_same(*packed, *make(text));
    CHECK(packed->meta().labels.find("tier") == std::optional<std::string_view>(R"(front"s)"));
  }
  SECTION("an empty resourceVersion, which no reader can splice another into") {
    std::string text = pod_text(10);
    const std::string version = R"("resourceVersion":"1010")";
    text.replace(text.find(version), version.size(), R"("resourceVersion":"")");
    auto packed = make(text, packer.get());
    REQUIRE(packed->packed());
    check_same(*packed, *make(text));
    CHECK(packed->resource_version_at() == std::string_view::npos);
  }
  SECTION("a watch event's object") {
    const std::string line = R"({"type":"MODIFIED","object":)" + pod_text(11) + "}";
    auto packed = decode_watch_event(line, packing_with(*packer));
    auto plain = decode_watch_event(line);
    REQUIRE(packed);
    REQUIRE(plain);
    REQUIRE(packed->object->packed());
    check_same(*packed->object, *plain->object);
  }
  SECTION("a list's items") {
    std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},)"
                       R"("items":[)";
    for (int i = 0; i < 5; ++i)
      body += (i ? "," : "") + pod_text(20 + i, false);
    body += "]}";
    auto packed = decode_list(body, packing_with(*packer));
    auto plain = decode_list(body);
    REQUIRE(packed);
    REQUIRE(plain);
    REQUIRE(packed->items.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(packed->items[i]->packed());
      check_same(*packed->items[i], *plain->items[i]);
    }
  }
}

TEST_CASE("an object that packing would not make smaller is kept as it is") {
  auto packer = trained_packer();
  auto tiny = make(R"({"kind":"Pod","metadata":{"name":"a"}})", packer.get());
  CHECK_FALSE(tiny->packed());
  CHECK(tiny->json_text() == R"({"kind":"Pod","metadata":{"name":"a"}})");
}

TEST_CASE("a packed object keeps its dictionary alive after its packer is gone") {
  auto packer = trained_packer();
  const std::string text = pod_text(77);
  auto packed = make(text, packer.get());
  REQUIRE(packed->packed());
  packer.reset();
  CHECK(packed->json_text() == text);
}

TEST_CASE("two threads share one packer while it trains and after") {
  object_packer packer(packer_options{32, 1 << 20});
  std::vector<object_ptr> made[2];
  auto work = [&](int thread) {
    for (int i = 0; i < 200; ++i) {
      auto obj = object::parse(pod_text(thread * 1000 + i), nullptr, nullptr, nullptr, &packer);
      if (obj)
        made[thread].push_back(std::move(obj).value());
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  REQUIRE(packer.dictionary());
  std::size_t packed = 0;
  for (int thread = 0; thread < 2; ++thread) {
    REQUIRE(made[thread].size() == 200);
    for (int i = 0; i < 200; ++i) {
      CHECK(made[thread][i]->json_text() == pod_text(thread * 1000 + i));
      packed += made[thread][i]->packed();
    }
  }
  CHECK(packed == 400 - 32); // every object but the samples
}
