// The simulator's storage: writes and their Status errors, list semantics (selectors, paging,
// resourceVersion), watch semantics (replay, expiry, selector transitions, streaming lists),
// data faults and concurrent writers.

#include "app/apiserver/api_status.hpp"
#include "app/apiserver/continue_token.hpp"
#include "app/kubesim/merge_patch.hpp"
#include "app/kubesim/storage.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace json = boost::json;
using namespace kinformer;
using namespace kinformer::sim;

namespace {

const group_version_resource pods{"", "v1", "pods"};
const group_version_resource configmaps{"", "v1", "configmaps"};
const group_version_resource nodes{"", "v1", "nodes"};
const group_version_resource deployments{"apps", "v1", "deployments"};

storage_options bare() {
  storage_options o;
  o.create_default_namespaces = false;
  return o;
}

std::string pod_json(std::string_view name, std::string_view app = "web",
                     std::string_view phase = "Running") {
  json::object o{{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
                 {"spec", {{"nodeName", "node-1"}}},
                 {"status", {{"phase", phase}}}};
  return json::serialize(o);
}

stored_object must(api_result<stored_object> r) {
  INFO((r.ok() ? std::string() : r.failure().message));
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::uint64_t rv_of(const stored_object& s) {
  return std::stoull(std::string(s.object->meta().resource_version));
}

std::vector<std::string> names(const list_result& l) {
  std::vector<std::string> out;
  for (const auto& item : l.items)
    out.emplace_back(item.object->meta().name);
  return out;
}

// Collects what a watch delivers; waits for a count with a condition variable.
struct recorder {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<watch_message> messages;

  watch_sink sink() {
    return [this](const watch_message& m) {
      std::lock_guard lock(mutex);
      messages.push_back(m);
      changed.notify_all();
    };
  }
  std::vector<watch_message> wait_for(std::size_t count) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return messages.size() >= count; });
    return messages;
  }
  std::vector<watch_message> snapshot() {
    std::lock_guard lock(mutex);
    return messages;
  }
};

// "ADDED web-1" etc., for compact assertions.
std::vector<std::string> summary(const std::vector<watch_message>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) {
    auto line = json::parse(*m.line).as_object();
    std::string text(line.at("type").as_string());
    const auto& meta = line.at("object").at("metadata").as_object();
    if (const auto* name = meta.if_contains("name"))
      text += " " + std::string(name->as_string());
    out.push_back(text);
  }
  return out;
}

list_request list_of(const group_version_resource& gvr, std::string ns = {}) {
  list_request r;
  r.gvr = gvr;
  r.namespace_ = std::move(ns);
  return r;
}

watch_request watch_of(const group_version_resource& gvr, std::string rv) {
  watch_request r;
  r.gvr = gvr;
  r.resource_version = std::move(rv);
  r.send_initial_events = false;
  r.match = resource_version_match::not_older_than;
  return r;
}

} // namespace

TEST_CASE("built-in resources and default namespaces are there at construction") {
  storage store;
  auto pod = store.find_resource(pods);
  REQUIRE(pod);
  CHECK(pod->kind == "Pod");
  CHECK(pod->list_kind() == "PodList");
  CHECK(pod->short_names == std::vector<std::string>{"po"});
  REQUIRE(store.find_kind({"apps", "v1", "Deployment"}));
  CHECK(store.find_resource(nodes)->scope == resource_scope::cluster);
  CHECK(store.resources().size() == 9);
  auto namespaces = store.list(list_of({"", "v1", "namespaces"}));
  REQUIRE(namespaces.ok());
  CHECK(names(*namespaces) ==
        std::vector<std::string>{"default", "kube-node-lease", "kube-public", "kube-system"});
  CHECK(namespaces->items[0].object->tree().at("status").at("phase") == "Active");
  CHECK(store.current_resource_version() == 4);
}

TEST_CASE("create fills identity fields and the resourceVersion increases on every write") {
  storage store(bare());
  auto a = must(store.create(pods, "default", pod_json("a")));
  auto b = must(store.create(configmaps, "default", R"({"metadata":{"name":"cfg"}})"));
  auto c = must(store.create(pods, "other", pod_json("a")));
  CHECK(rv_of(a) == 1);
  CHECK(rv_of(b) == 2);
  CHECK(rv_of(c) == 3);
  CHECK(store.current_resource_version() == 3);
  CHECK(a.object->key() == "default/a");
  CHECK(a.object->meta().uid.size() == 36);
  CHECK(a.object->meta().uid != c.object->meta().uid);
  CHECK(a.object->meta().generation == 1);
  CHECK(a.object->tree().at("metadata").at("creationTimestamp").as_string().size() == 20);
  // Kind and apiVersion are filled in when the body leaves them out.
  CHECK(b.object->kind() == "ConfigMap");
  CHECK(b.object->api_version() == "v1");
  // The stored JSON text is the object, serialised once.
  CHECK(json::parse(*a.json) == a.object->tree());
}

TEST_CASE("create errors are worded as the API server words them") {
  storage store(bare());
  must(store.create(pods, "default", pod_json("a")));

  auto dup = store.create(pods, "default", pod_json("a"));
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.failure().code == 409);
  CHECK(dup.failure().reason == "AlreadyExists");
  CHECK(dup.failure().message == R"(pods "a" already exists)");

  auto noname = store.create(pods, "default", R"({"metadata":{}})");
  REQUIRE_FALSE(noname.ok());
  CHECK(noname.failure().code == 422);
  CHECK(noname.failure().reason == "Invalid");
  CHECK(noname.failure().message ==
        R"(Pod "" is invalid: metadata.name: Required value: name or generateName is required)");

  auto wrong_ns = store.create(pods, "default", R"({"metadata":{"name":"x","namespace":"b"}})");
  REQUIRE_FALSE(wrong_ns.ok());
  CHECK(wrong_ns.failure().code == 400);
  CHECK(wrong_ns.failure().reason == "BadRequest");

  auto wrong_kind = store.create(pods, "default", R"({"kind":"Node","metadata":{"name":"x"}})");
  REQUIRE_FALSE(wrong_kind.ok());
  CHECK(wrong_kind.failure().code == 400);

  for (std::string_view bad : {"{", "[1,2", "", "not json", "42"}) {
    auto r = store.create(pods, "default", bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.failure().code == 400);
    CHECK(r.failure().reason == "BadRequest");
  }
  auto bad_labels = store.create(pods, "default", R"({"metadata":{"name":"x","labels":{"a":1}}})");
  REQUIRE_FALSE(bad_labels.ok());
  CHECK(bad_labels.failure().code == 400);

  auto unknown = store.create({"example.com", "v1", "widgets"}, "default", "{}");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.failure().code == 404);
  // Failed writes consume no resourceVersion.
  CHECK(store.current_resource_version() == 1);
}

TEST_CASE("generateName, namespaces from the body, and cluster-scoped objects") {
  storage store(bare());
  auto generated = must(store.create(pods, "default", R"({"metadata":{"generateName":"web-"}})"));
  CHECK(generated.object->meta().name.size() == 9);
  CHECK(generated.object->meta().name.substr(0, 4) == "web-");
  auto from_body = must(store.create(pods, "", R"({"metadata":{"name":"b","namespace":"ns1"}})"));
  CHECK(from_body.object->key() == "ns1/b");
  auto none = store.create(pods, "", R"({"metadata":{"name":"c"}})");
  REQUIRE_FALSE(none.ok());
  CHECK(none.failure().code == 422);
  auto node = must(store.create(nodes, "", R"({"metadata":{"name":"n1","namespace":"x"}})"));
  CHECK(node.object->key() == "n1");
  CHECK(node.object->meta().namespace_.empty());
  CHECK(must(store.get(nodes, "", "n1")).object == node.object);
}

TEST_CASE("get answers 404 NotFound with the group-qualified resource") {
  storage store(bare());
  auto missing = store.get(deployments, "default", "api");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.failure().code == 404);
  CHECK(missing.failure().reason == "NotFound");
  CHECK(missing.failure().message == R"(deployments.apps "api" not found)");
  CHECK(apiserver::status_json(missing.failure()).find(R"("kind":"Status")") != std::string::npos);
}

TEST_CASE("update checks resourceVersion, keeps identity, bumps generation on spec change") {
  storage store(bare());
  auto created = must(store.create(pods, "default", pod_json("a")));
  json::value body(created.object->tree(), json::storage_ptr());
  body.as_object()["metadata"].as_object()["labels"].as_object()["tier"] = "front";
  auto labelled = must(store.update_value(pods, "default", "a", body));
  CHECK(rv_of(labelled) == rv_of(created) + 1);
  CHECK(labelled.object->meta().generation == 1); // metadata only: no generation bump
  CHECK(labelled.object->meta().uid == created.object->meta().uid);

  // The same body again carries a stale resourceVersion now.
  auto stale = store.update_value(pods, "default", "a", body);
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.failure().code == 409);
  CHECK(stale.failure().reason == "Conflict");
  CHECK(
      stale.failure().message ==
      R"(Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again)");

  json::value spec_change(labelled.object->tree(), json::storage_ptr());
  spec_change.as_object()["spec"].as_object()["nodeName"] = "node-2";
  auto moved = must(store.update_value(pods, "default", "a", spec_change));
  CHECK(moved.object->meta().generation == 2);

  // A no-op update (no resourceVersion given: unconditional) writes nothing.
  json::value same(moved.object->tree(), json::storage_ptr());
  same.as_object()["metadata"].as_object().erase("resourceVersion");
  auto noop = must(store.update_value(pods, "default", "a", same));
  CHECK(rv_of(noop) == rv_of(moved));
  CHECK(store.current_resource_version() == rv_of(moved));
  // Nor does one that sends the same object with its keys in another order (as a client
  // encoding in its own field order does).
  json::object reordered;
  const auto moved_tree = moved.object->tree();
  const auto& fields = moved_tree.as_object();
  for (auto it = fields.end(); it != fields.begin();) {
    --it;
    reordered[it->key()] = it->value();
  }
  auto reordered_noop = must(store.update_value(pods, "default", "a", json::value(reordered)));
  CHECK(rv_of(reordered_noop) == rv_of(moved));
  // Same length, same bytes in another order, different content: a real write.
  auto relabelled = json::value(moved.object->tree());
  relabelled.as_object()["metadata"].as_object()["labels"].as_object()["app"] = "bew";
  auto changed = must(store.update_value(pods, "default", "a", relabelled));
  CHECK(rv_of(changed) > rv_of(moved));

  auto missing = store.update(pods, "default", "zzz", pod_json("zzz"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.failure().code == 404);
  auto renamed = store.update(pods, "default", "a", pod_json("b"));
  REQUIRE_FALSE(renamed.ok());
  CHECK(renamed.failure().code == 400);
  CHECK(renamed.failure().message ==
        "the name of the object (b) does not match the name on the URL (a)");
  auto garbage = store.update(pods, "default", "a", "{\"metadata\":");
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.failure().code == 400);
}

TEST_CASE("merge, strategic and JSON patches") {
  storage store(bare());
  must(store.create(pods, "default", pod_json("a")));
  auto merged = must(store.patch(pods, "default", "a", patch_type::merge,
                                 R"({"metadata":{"labels":{"app":null,"x":"1"}}})"));
  CHECK(merged.object->meta().labels.size() == 1);
  CHECK(merged.object->meta().label("x") == "1");

  auto strategic = must(store.patch(pods, "default", "a", patch_type::strategic_merge,
                                    R"({"status":{"phase":"Failed"}})"));
  CHECK(strategic.object->tree().at("status").at("phase") == "Failed");
  CHECK(strategic.object->meta().generation == 1);

  auto jp = must(store.patch(pods, "default", "a", patch_type::json_patch,
                             R"([{"op":"replace","path":"/spec/nodeName","value":"n9"},
                                 {"op":"add","path":"/metadata/annotations","value":{"k":"v"}}])"));
  CHECK(jp.object->tree().at("spec").at("nodeName") == "n9");
  CHECK(jp.object->meta().annotation("k") == "v");
  CHECK(jp.object->meta().generation == 2);

  auto stale = store.patch(pods, "default", "a", patch_type::merge,
                           R"({"metadata":{"resourceVersion":"1","labels":{"y":"2"}}})");
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.failure().code == 409);

  auto failed_test = store.patch(pods, "default", "a", patch_type::json_patch,
                                 R"([{"op":"test","path":"/spec/nodeName","value":"other"}])");
  REQUIRE_FALSE(failed_test.ok());
  CHECK(failed_test.failure().code == 422);
  auto not_json = store.patch(pods, "default", "a", patch_type::merge, "{bad");
  REQUIRE_FALSE(not_json.ok());
  CHECK(not_json.failure().code == 400);
  auto missing = store.patch(pods, "default", "nope", patch_type::merge, "{}");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.failure().code == 404);
}

TEST_CASE("RFC 7386 and RFC 6902 on plain values") {
  json::value target = json::parse(R"({"a":"b","c":{"d":"e","f":"g"}})");
  apply_merge_patch(target, json::parse(R"({"a":"z","c":{"f":null}})"));
  CHECK(target == json::parse(R"({"a":"z","c":{"d":"e"}})"));
  apply_merge_patch(target, json::parse(R"(["replaced"])"));
  CHECK(target == json::parse(R"(["replaced"])"));

  json::value doc = json::parse(R"({"list":[1,2,3],"a~b":{"c/d":1}})");
  REQUIRE(apply_json_patch(doc, json::parse(R"([
    {"op":"add","path":"/list/1","value":9},
    {"op":"remove","path":"/list/0"},
    {"op":"add","path":"/list/-","value":4},
    {"op":"copy","from":"/a~0b/c~1d","path":"/copied"},
    {"op":"move","from":"/copied","path":"/moved"},
    {"op":"test","path":"/moved","value":1}])"))
              .ok());
  CHECK(doc == json::parse(R"({"list":[9,2,3,4],"a~b":{"c/d":1},"moved":1})"));
  for (std::string_view bad :
       {R"({"op":"add"})", R"([{"op":"remove","path":"/nope"}])",
        R"([{"op":"add","path":"/list/99","value":1}])", R"([{"op":"jump","path":"/list"}])",
        R"([{"path":"/a"}])", R"([{"op":"add","path":"x","value":1}])"}) {
    json::value copy = doc;
    CHECK_FALSE(apply_json_patch(copy, json::parse(bad)).ok());
  }
}

TEST_CASE("delete returns the object at the deletion's resourceVersion") {
  storage store(bare());
  auto created = must(store.create(pods, "default", pod_json("a")));
  auto stale = store.remove(pods, "default", "a", "999");
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.failure().code == 409);
  CHECK(stale.failure().reason == "Conflict");
  auto deleted = must(store.remove(pods, "default", "a", created.object->meta().resource_version));
  CHECK(rv_of(deleted) == rv_of(created) + 1);
  CHECK(deleted.object->meta().uid == created.object->meta().uid);
  auto again = store.remove(pods, "default", "a");
  REQUIRE_FALSE(again.ok());
  CHECK(again.failure().code == 404);
  CHECK(again.failure().message == R"(pods "a" not found)");
  CHECK(store.truth(pods).empty());
}

TEST_CASE("finalizers hold a deleted object until the last one is removed") {
  storage store(bare());
  must(store.create(configmaps, "default", R"({"metadata":{"name":"f","finalizers":["x/y"]}})"));
  auto marked = must(store.remove(configmaps, "default", "f"));
  CHECK_FALSE(marked.object->meta().deletion_timestamp.empty());
  CHECK(store.get(configmaps, "default", "f").ok());
  auto cleared = must(store.patch(configmaps, "default", "f", patch_type::merge,
                                  R"({"metadata":{"finalizers":null}})"));
  CHECK(rv_of(cleared) == rv_of(marked) + 1);
  CHECK_FALSE(store.get(configmaps, "default", "f").ok());
}

TEST_CASE("dry-run writes answer as the write would, store nothing and send no event") {
  storage store(bare());
  auto stored = must(store.create(pods, "default", pod_json("p")));
  std::vector<event_type> seen;
  watch_request w;
  w.gvr = pods;
  w.resource_version = std::to_string(rv_of(stored));
  auto handle = store.watch(w, [&](const watch_message& m) { seen.push_back(m.type); });
  REQUIRE(handle.ok());
  const auto rv = store.current_resource_version();
  write_options dry;
  dry.dry_run = true;

  auto created = must(store.create(pods, "default", pod_json("q"), dry));
  CHECK(created.object->meta().name == "q");
  CHECK_FALSE(created.object->meta().uid.empty());
  CHECK(created.object->meta().resource_version.empty()); // nothing was written
  CHECK(store.get(pods, "default", "q").failure().code == 404);
  CHECK(store.create(pods, "default", pod_json("p"), dry).failure().code == 409);

  auto updated = must(store.update(pods, "default", "p", pod_json("p", "api"), dry));
  CHECK(updated.object->meta().label("app") == "api");
  CHECK(updated.object->meta().resource_version == stored.object->meta().resource_version);
  auto patched = must(store.patch(pods, "default", "p", patch_type::merge,
                                  R"({"metadata":{"labels":{"app":"db"}}})", dry));
  CHECK(patched.object->meta().label("app") == "db");
  CHECK(store.update(pods, "default", "p", R"({"metadata":{"resourceVersion":"999"}})", dry)
            .failure()
            .code == 409);
  auto removed = must(store.remove(pods, "default", "p", {}, dry));
  CHECK(removed.object->meta().name == "p");

  CHECK(store.current_resource_version() == rv);
  CHECK(seen.empty());
  CHECK(*store.get(pods, "default", "p")->json == *stored.json);
}

TEST_CASE("create_value and update_value take moved trees and copied ones alike") {
  storage store(bare());
  json::value body = json::parse(pod_json("moved"));
  auto created = must(store.create_value(pods, "default", std::move(body)));
  CHECK(created.object->meta().name == "moved");

  // A tree in another allocator is copied rather than adopted.
  json::monotonic_resource arena;
  json::value in_arena = json::parse(pod_json("arena"), json::storage_ptr(&arena));
  must(store.create_value(pods, "default", std::move(in_arena)));
  const json::value kept = json::parse(pod_json("kept"));
  must(store.create_value(pods, "default", kept));
  CHECK(kept.at("metadata").as_object().size() == 2); // name and labels: untouched

  json::value edit(created.object->tree(), json::storage_ptr());
  edit.at("status").at("phase") = "Succeeded";
  auto updated = must(store.update_value(pods, "default", "moved", std::move(edit)));
  CHECK(rv_of(updated) > rv_of(created));
  CHECK(json::parse(*updated.json).at("status").at("phase") == "Succeeded");
  CHECK(store.get(pods, "default", "arena").ok());
}

TEST_CASE("list filters by namespace, labels and supported fields, sorted by key") {
  storage store(bare());
  must(store.create(pods, "b", pod_json("p2", "web")));
  must(store.create(pods, "a", pod_json("p3", "db", "Pending")));
  must(store.create(pods, "a", pod_json("p1", "web")));
  must(store.create(pods, "ab", pod_json("p0", "web")));

  auto all = store.list(list_of(pods));
  REQUIRE(all.ok());
  CHECK(names(*all) == std::vector<std::string>{"p1", "p3", "p0", "p2"});
  CHECK(all->resource_version == 4);
  CHECK(all->continue_token.empty());
  CHECK_FALSE(all->remaining_item_count);

  CHECK(names(store.list(list_of(pods, "a")).value()) == std::vector<std::string>{"p1", "p3"});
  auto web = list_of(pods);
  web.labels = label_selector::parse("app=web").value();
  CHECK(names(store.list(web).value()) == std::vector<std::string>{"p1", "p0", "p2"});
  auto running = list_of(pods, "a");
  running.fields = field_selector::parse("status.phase=Running").value();
  CHECK(names(store.list(running).value()) == std::vector<std::string>{"p1"});
  auto by_name = list_of(pods);
  by_name.fields = field_selector::parse("metadata.name!=p1,metadata.namespace=a").value();
  CHECK(names(store.list(by_name).value()) == std::vector<std::string>{"p3"});

  auto unsupported = list_of(pods);
  unsupported.fields = field_selector::parse("spec.containers=x").value();
  auto r = store.list(unsupported);
  REQUIRE_FALSE(r.ok());
  CHECK(r.failure().code == 400);
  CHECK(r.failure().message == "field label not supported: spec.containers");

  auto meta_only = list_of(pods, "b");
  meta_only.metadata_only = true;
  auto partial = store.list(meta_only);
  REQUIRE(partial.ok());
  REQUIRE(partial->items.size() == 1);
  CHECK(partial->items[0].object->kind() == "PartialObjectMetadata");
  CHECK(json::parse(*partial->items[0].json).as_object().count("spec") == 0);
}

TEST_CASE("pagination serves every page from the first page's snapshot") {
  storage store(bare());
  for (auto name : {"p1", "p2", "p3", "p4", "p5"})
    must(store.create(pods, "default", pod_json(name)));
  auto first_request = list_of(pods);
  first_request.limit = 2;
  auto first = store.list(first_request).value();
  CHECK(names(first) == std::vector<std::string>{"p1", "p2"});
  REQUIRE_FALSE(first.continue_token.empty());
  CHECK(first.remaining_item_count == 3);
  CHECK(first.resource_version == 5);

  // Writes between pages do not show up in later pages.
  must(store.remove(pods, "default", "p3"));
  must(store.create(pods, "default", pod_json("p35")));
  must(store.patch(pods, "default", "p4", patch_type::merge,
                   R"({"metadata":{"labels":{"x":"y"}}})"));

  auto next = list_of(pods);
  next.limit = 2;
  next.continue_token = first.continue_token;
  auto second = store.list(next).value();
  CHECK(names(second) == std::vector<std::string>{"p3", "p4"});
  CHECK(second.items[1].object->meta().label("x") == std::nullopt);
  CHECK(second.resource_version == 5);
  CHECK(second.remaining_item_count == 1);
  next.continue_token = second.continue_token;
  auto third = store.list(next).value();
  CHECK(names(third) == std::vector<std::string>{"p5"});
  CHECK(third.continue_token.empty());

  // With a selector, remainingItemCount is not reported.
  auto selective = list_of(pods);
  selective.limit = 1;
  selective.labels = label_selector::parse("app=web").value();
  auto page = store.list(selective).value();
  CHECK_FALSE(page.continue_token.empty());
  CHECK_FALSE(page.remaining_item_count);
}

TEST_CASE("continue tokens expire with compaction, bad tokens are 400") {
  storage store(bare());
  for (auto name : {"p1", "p2", "p3"})
    must(store.create(pods, "default", pod_json(name)));
  auto request = list_of(pods);
  request.limit = 1;
  auto first = store.list(request).value();
  must(store.create(pods, "default", pod_json("p4")));
  store.compact();
  request.continue_token = first.continue_token;
  auto expired_page = store.list(request);
  REQUIRE_FALSE(expired_page.ok());
  CHECK(expired_page.failure().code == 410);
  CHECK(expired_page.failure().reason == "Expired");
  CHECK(expired_page.failure().message.rfind("The provided continue parameter is too old", 0) == 0);

  for (std::string bad : {"!!!", "e30", "bm90IGpzb24"}) { // bad base64, "{}", "not json"
    request.continue_token = bad;
    auto r = store.list(request);
    REQUIRE_FALSE(r.ok());
    CHECK(r.failure().code == 400);
  }
  request.continue_token = first.continue_token;
  request.resource_version = "0";
  CHECK(store.list(request).failure().code == 400);

  auto token = apiserver::continue_token::after(42, "ns/name");
  auto decoded = apiserver::continue_token::decode(token.encode());
  REQUIRE(decoded.ok());
  CHECK(decoded->resource_version == 42);
  CHECK(decoded->start_key == std::string("ns/name\0", 8));
}

TEST_CASE("list resourceVersion semantics") {
  storage store(bare());
  auto a = must(store.create(pods, "default", pod_json("a")));
  must(store.create(pods, "default", pod_json("b")));
  must(store.remove(pods, "default", "a"));
  const auto current = store.current_resource_version();

  for (std::string rv : {"", "0", "1"}) {
    auto r = list_of(pods);
    r.resource_version = rv;
    auto l = store.list(r);
    REQUIRE(l.ok());
    CHECK(l->resource_version == current);
    CHECK(names(*l) == std::vector<std::string>{"b"});
  }
  auto future = list_of(pods);
  future.resource_version = std::to_string(current + 10);
  future.match = resource_version_match::not_older_than;
  auto too_large = store.list(future);
  REQUIRE_FALSE(too_large.ok());
  CHECK(too_large.failure().code == 504);
  CHECK(too_large.failure().cause_types == std::vector<std::string>{"ResourceVersionTooLarge"});

  // Exact: the state at that revision, served from the history window.
  auto exact = list_of(pods);
  exact.resource_version = std::string(a.object->meta().resource_version);
  exact.match = resource_version_match::exact;
  auto at_a = store.list(exact);
  REQUIRE(at_a.ok());
  CHECK(at_a->resource_version == rv_of(a));
  CHECK(names(*at_a) == std::vector<std::string>{"a"});
  store.compact();
  auto gone = store.list(exact);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.failure().code == 410);
  exact.resource_version = std::to_string(current);
  CHECK(store.list(exact).ok());

  auto exact_zero = list_of(pods);
  exact_zero.resource_version = "0";
  exact_zero.match = resource_version_match::exact;
  CHECK(store.list(exact_zero).failure().code == 422);
  auto match_without_rv = list_of(pods);
  match_without_rv.match = resource_version_match::not_older_than;
  CHECK(store.list(match_without_rv).failure().code == 422);
  auto garbage = list_of(pods);
  garbage.resource_version = "12abc";
  CHECK(store.list(garbage).failure().code == 400);
}

TEST_CASE("watch replays history after a resourceVersion, then goes live") {
  storage store(bare());
  auto a = must(store.create(pods, "default", pod_json("a")));
  must(store.create(configmaps, "default", R"({"metadata":{"name":"c"}})"));
  must(
      store.patch(pods, "default", "a", patch_type::merge, R"({"metadata":{"labels":{"v":"2"}}})"));
  must(store.create(pods, "default", pod_json("b")));

  recorder seen;
  auto handle =
      store.watch(watch_of(pods, std::string(a.object->meta().resource_version)), seen.sink());
  REQUIRE(handle.ok());
  CHECK(summary(seen.snapshot()) == std::vector<std::string>{"MODIFIED a", "ADDED b"});
  must(store.remove(pods, "default", "b"));
  auto messages = seen.wait_for(3);
  CHECK(summary(messages) == std::vector<std::string>{"MODIFIED a", "ADDED b", "DELETED b"});
  CHECK(messages[0].resource_version == 3);
  CHECK(messages[2].resource_version == 5);
  // Each line is exactly {"type","object"} and its object carries the event's resourceVersion.
  for (const auto& m : messages) {
    auto line = json::parse(*m.line).as_object();
    CHECK(line.size() == 2);
    CHECK(line.at("object").at("metadata").at("resourceVersion") ==
          json::value(std::to_string(m.resource_version)));
    CHECK(m.line->back() == '\n');
  }
  CHECK(store.watch_count() == 1);
  handle.value().stop();
  CHECK(store.watch_count() == 0);
  must(store.create(pods, "default", pod_json("c")));
  CHECK(seen.snapshot().size() == 3);
}

TEST_CASE("watch from a resourceVersion older than the window is 410 Expired") {
  storage_options small = bare();
  small.history_limit = 3;
  storage store(small);
  for (auto name : {"a", "b", "c", "d", "e"})
    must(store.create(pods, "default", pod_json(name)));
  CHECK(store.oldest_resource_version() == 2);
  recorder seen;
  auto old = store.watch(watch_of(pods, "1"), seen.sink());
  REQUIRE_FALSE(old.ok());
  CHECK(old.failure().code == 410);
  CHECK(old.failure().reason == "Expired");
  CHECK(old.failure().message == "too old resource version: 1 (2)");
  auto edge = store.watch(watch_of(pods, "2"), seen.sink());
  REQUIRE(edge.ok());
  CHECK(summary(seen.snapshot()) == std::vector<std::string>{"ADDED c", "ADDED d", "ADDED e"});

  auto future = store.watch(watch_of(pods, "99"), seen.sink());
  REQUIRE_FALSE(future.ok());
  CHECK(future.failure().code == 504);
  CHECK(future.failure().cause_types == std::vector<std::string>{"ResourceVersionTooLarge"});
}

TEST_CASE("selector watches see objects entering as ADDED and leaving as DELETED") {
  storage store(bare());
  must(store.create(pods, "default", pod_json("a", "web")));
  auto request = watch_of(pods, std::to_string(store.current_resource_version()));
  request.labels = label_selector::parse("app=web").value();
  request.namespace_ = "default";
  recorder seen;
  auto handle = store.watch(request, seen.sink());
  REQUIRE(handle.ok());

  auto leaves = must(store.patch(pods, "default", "a", patch_type::merge,
                                 R"({"metadata":{"labels":{"app":"db"}}})"));
  must(store.patch(pods, "default", "a", patch_type::merge,
                   R"({"metadata":{"labels":{"other":"1"}}})")); // still not matching: nothing
  must(store.create(pods, "other", pod_json("b", "web")));       // other namespace: nothing
  must(store.patch(pods, "default", "a", patch_type::merge,
                   R"({"metadata":{"labels":{"app":"web"}}})"));
  must(store.patch(pods, "default", "a", patch_type::merge, R"({"status":{"phase":"Failed"}})"));
  auto messages = seen.wait_for(3);
  CHECK(summary(messages) == std::vector<std::string>{"DELETED a", "ADDED a", "MODIFIED a"});
  // The DELETED carries the last matching content at the event's resourceVersion.
  auto deleted = json::parse(*messages[0].line);
  CHECK(deleted.at("object").at("metadata").at("labels").at("app") == "web");
  CHECK(deleted.at("object").at("metadata").at("resourceVersion").as_string() ==
        leaves.object->meta().resource_version);
  CHECK(messages[0].object->meta().label("app") == "web");
  CHECK(messages[1].object->meta().label("app") == "web");
  CHECK(seen.snapshot().size() == 3);
}

TEST_CASE("sendInitialEvents streams the current state, then the end bookmark if asked for") {
  storage store(bare());
  must(store.create(pods, "default", pod_json("b")));
  must(store.create(pods, "default", pod_json("a", "db")));
  must(store.create(pods, "default", pod_json("c")));
  watch_request request;
  request.gvr = pods;
  request.send_initial_events = true;
  request.allow_bookmarks = true;
  request.match = resource_version_match::not_older_than;
  request.labels = label_selector::parse("app=web").value();
  recorder seen;
  auto handle = store.watch(request, seen.sink());
  REQUIRE(handle.ok());
  auto messages = seen.snapshot();
  CHECK(summary(messages) == std::vector<std::string>{"ADDED b", "ADDED c", "BOOKMARK"});
  auto bookmark = json::parse(*messages.back().line);
  CHECK(bookmark.at("object").at("kind") == "Pod");
  CHECK(bookmark.at("object").at("metadata").at("resourceVersion") == "3");
  CHECK(bookmark.at("object").at("metadata").at("annotations").at("k8s.io/initial-events-end") ==
        "true");
  CHECK(messages.back().type == event_type::bookmark);
  must(store.create(pods, "default", pod_json("d")));
  CHECK(summary(seen.wait_for(4)).back() == "ADDED d");

  // Without allowWatchBookmarks, kube-apiserver v1.37 sends the initial events and no bookmark.
  request.allow_bookmarks = false;
  recorder unmarked;
  auto no_bookmarks = store.watch(request, unmarked.sink());
  REQUIRE(no_bookmarks.ok());
  CHECK(summary(unmarked.snapshot()) == std::vector<std::string>{"ADDED b", "ADDED c", "ADDED d"});

  // The real server's validation of the streaming-list parameters.
  request.allow_bookmarks = true;
  request.match = resource_version_match::unset;
  CHECK(store.watch(request, seen.sink()).failure().code == 422);
}

TEST_CASE("a legacy watch from \"\" or \"0\" starts with synthetic ADDED events, no bookmark") {
  storage store(bare());
  must(store.create(pods, "default", pod_json("a")));
  watch_request request;
  request.gvr = pods;
  request.resource_version = "0";
  recorder seen;
  auto handle = store.watch(request, seen.sink());
  REQUIRE(handle.ok());
  CHECK(summary(seen.snapshot()) == std::vector<std::string>{"ADDED a"});
  CHECK(seen.snapshot()[0].resource_version == 1);

  request.send_initial_events = false;
  request.match = resource_version_match::not_older_than;
  recorder quiet;
  auto from_now = store.watch(request, quiet.sink());
  REQUIRE(from_now.ok());
  CHECK(quiet.snapshot().empty());
}

TEST_CASE("bookmarks go to watches that allow them, in order with events") {
  storage store(bare());
  recorder with, without, metadata;
  auto a = watch_of(pods, "0");
  a.allow_bookmarks = true;
  auto b = watch_of(pods, "0");
  auto c = watch_of(pods, "0");
  c.allow_bookmarks = true;
  c.metadata_only = true;
  auto ha = store.watch(a, with.sink());
  auto hb = store.watch(b, without.sink());
  auto hc = store.watch(c, metadata.sink());
  must(store.create(pods, "default", pod_json("x")));
  store.send_bookmarks();
  CHECK(summary(with.snapshot()) == std::vector<std::string>{"ADDED x", "BOOKMARK"});
  CHECK(with.snapshot().back().resource_version == 1);
  CHECK(summary(without.snapshot()) == std::vector<std::string>{"ADDED x"});
  auto partial = metadata.snapshot();
  REQUIRE(partial.size() == 2);
  CHECK(json::parse(*partial[0].line).at("object").at("kind") == "PartialObjectMetadata");
  CHECK(json::parse(*partial[0].line).at("object").as_object().count("spec") == 0);
  CHECK(json::parse(*partial[1].line).at("object").at("kind") == "PartialObjectMetadata");
}

TEST_CASE("the truth dump lists every key with its resourceVersion") {
  storage store(bare());
  must(store.create(pods, "b", pod_json("x")));
  must(store.create(pods, "a", pod_json("y")));
  must(store.patch(pods, "b", "x", patch_type::merge, R"({"metadata":{"labels":{"k":"v"}}})"));
  CHECK(store.truth(pods) == std::vector<object_version>{{"a/y", 2}, {"b/x", 3}});
  CHECK(store.truth(configmaps).empty());
}

TEST_CASE("data faults: failing watches and lists, compaction, restore") {
  storage store(bare());
  must(store.create(pods, "default", pod_json("a")));

  store.fail_next_watches(2);
  recorder seen;
  for (int i = 0; i < 2; ++i) {
    auto failed = store.watch(watch_of(pods, "1"), seen.sink());
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.failure().code == 410);
  }
  CHECK(store.watch(watch_of(pods, "1"), seen.sink()).ok());

  store.fail_next_lists(1, 429, 3);
  auto throttled = store.list(list_of(pods));
  REQUIRE_FALSE(throttled.ok());
  CHECK(throttled.failure().code == 429);
  CHECK(throttled.failure().reason == "TooManyRequests");
  CHECK(throttled.failure().retry_after_seconds == 3);
  CHECK(apiserver::status_json(throttled.failure()).find(R"("retryAfterSeconds":3)") !=
        std::string::npos);
  store.fail_next_lists(1, 500);
  CHECK(store.list(list_of(pods)).failure().reason == "InternalError");
  CHECK(store.list(list_of(pods)).ok());

  must(store.create(pods, "default", pod_json("b")));
  store.compact();
  CHECK(store.oldest_resource_version() == 2);
  CHECK(store.watch(watch_of(pods, "1"), seen.sink()).failure().code == 410);
  CHECK(store.watch(watch_of(pods, "2"), seen.sink()).ok());

  store.restore();
  const auto jumped = store.current_resource_version();
  CHECK(jumped == 1000002);
  CHECK(store.watch(watch_of(pods, "2"), seen.sink()).failure().code == 410);
  CHECK(store.truth(pods).size() == 2);
  auto after = must(store.create(pods, "default", pod_json("c")));
  CHECK(rv_of(after) == jumped + 1);
  CHECK(store.list(list_of(pods))->resource_version == jumped + 1);
}

TEST_CASE("restore from a backup: objects revert, later ones vanish, resourceVersion jumps") {
  storage store(bare());
  auto a1 = must(store.create(pods, "default", pod_json("a")));
  must(store.create(pods, "default", pod_json("b")));
  auto backup = store.backup();
  CHECK(backup.resource_version() == 2);
  CHECK(backup.size() == 2);

  must(store.update(pods, "default", "a", pod_json("a", "changed")));
  must(store.remove(pods, "default", "b"));
  must(store.create(pods, "default", pod_json("c")));
  const auto before = store.current_resource_version();
  recorder open_watch;
  watch_request bookmarked = watch_of(pods, std::to_string(before));
  bookmarked.allow_bookmarks = true;
  auto open = store.watch(bookmarked, open_watch.sink());
  REQUIRE(open.ok());

  store.restore(backup, 1000);
  // The open watch is ended: not even a bookmark at the new resourceVersion reaches it, or its
  // client would resume there without relisting.
  CHECK(store.watch_count() == 0);
  store.send_bookmarks();
  must(store.create(pods, "default", pod_json("e")));
  must(store.remove(pods, "default", "e"));
  CHECK(open_watch.snapshot().empty());
  CHECK(store.current_resource_version() == before + 1002); // the jump, then e's two writes
  // a is back at its older version (its resourceVersion goes back), b is back, c is gone.
  auto truth = store.truth(pods);
  REQUIRE(truth.size() == 2);
  CHECK(truth[0] == object_version{"default/a", rv_of(a1)});
  CHECK(truth[1].key == "default/b");
  // History is gone: every resourceVersion a client holds is too old.
  recorder seen;
  CHECK(store.watch(watch_of(pods, std::to_string(before)), seen.sink()).failure().code == 410);
  auto listed = store.list(list_of(pods));
  REQUIRE(listed.ok());
  CHECK(listed->resource_version == before + 1002);
  CHECK(listed->items.size() == 2);
  auto d = must(store.create(pods, "default", pod_json("d")));
  CHECK(rv_of(d) == before + 1003);
}

TEST_CASE("skipped revisions leave a resourceVersion gap and keep the history") {
  storage store(bare());
  auto a = must(store.create(pods, "default", pod_json("a")));
  store.skip_revisions(500);
  auto b = must(store.create(pods, "default", pod_json("b")));
  CHECK(rv_of(b) == rv_of(a) + 501);
  // A watch from before the gap, and one from inside it, replay what followed.
  recorder from_a, inside;
  REQUIRE(store.watch(watch_of(pods, std::to_string(rv_of(a))), from_a.sink()).ok());
  REQUIRE(store.watch(watch_of(pods, std::to_string(rv_of(a) + 10)), inside.sink()).ok());
  CHECK(summary(from_a.wait_for(1)) == std::vector<std::string>{"ADDED b"});
  CHECK(summary(inside.wait_for(1)) == std::vector<std::string>{"ADDED b"});
}

TEST_CASE("a watch handle can outlive its storage, moving keeps one registration") {
  recorder seen;
  watch_handle kept;
  {
    storage store(bare());
    auto handle = store.watch(watch_of(pods, "0"), seen.sink());
    REQUIRE(handle.ok());
    watch_handle moved = std::move(handle.value());
    CHECK(moved.active());
    kept = std::move(moved);
    CHECK(store.watch_count() == 1);
  }
  CHECK(kept.active());
  kept.stop();
  CHECK_FALSE(kept.active());
}

TEST_CASE("concurrent writers: every watcher sees one ordered stream") {
  storage store(bare());
  constexpr int writers = 4;
  constexpr int per_writer = 300; // creates, then updates of the same objects
  std::vector<recorder> watchers(3);
  std::vector<watch_handle> handles;
  for (auto& w : watchers)
    handles.push_back(std::move(store.watch(watch_of(pods, "0"), w.sink()).value()));
  std::vector<std::thread> threads;
  for (int t = 0; t < writers; ++t)
    threads.emplace_back([&store, t] {
      const std::string ns = "ns" + std::to_string(t);
      for (int i = 0; i < per_writer; ++i)
        (void)store.create(pods, ns, pod_json("p" + std::to_string(i)));
      for (int i = 0; i < per_writer; ++i)
        (void)store.patch(pods, ns, "p" + std::to_string(i), patch_type::merge,
                          R"({"status":{"phase":"Succeeded"}})");
    });
  for (auto& th : threads)
    th.join();
  const std::size_t total = writers * per_writer * 2;
  CHECK(store.current_resource_version() == total);
  for (auto& w : watchers) {
    auto messages = w.wait_for(total);
    REQUIRE(messages.size() == total);
    for (std::size_t i = 0; i < messages.size(); ++i)
      REQUIRE(messages[i].resource_version == i + 1);
  }
  // All watchers share the same serialised line for an event.
  CHECK(watchers[0].snapshot()[10].line == watchers[1].snapshot()[10].line);
  auto all = store.list(list_of(pods));
  REQUIRE(all.ok());
  CHECK(all->items.size() == writers * per_writer);
}
