// Listed items at the resourceVersion of an object already held come back as that object
// (protocol/held_objects.hpp): by object::parse, and by the list decoder through its slot.

#include "protocol/held_objects.hpp"
#include "protocol/list_decoder.hpp"
#include "protocol/object.hpp"
#include "protocol/transforms.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

using namespace kinformer;

namespace {

std::string pod(const std::string& ns, const std::string& name, const std::string& version,
                const std::string& phase = "Running") {
  boost::json::object metadata{{"name", name}, {"resourceVersion", version}};
  if (!ns.empty())
    metadata["namespace"] = ns;
  metadata["managedFields"] = boost::json::array{boost::json::object{{"manager", "kubelet"}}};
  return boost::json::serialize(boost::json::object{{"kind", "Pod"},
                                                    {"apiVersion", "v1"},
                                                    {"metadata", std::move(metadata)},
                                                    {"status", {{"phase", phase}}}});
}

object_ptr parsed(const std::string& text, const object_transform* transform = nullptr) {
  auto obj = object::parse(text, transform);
  REQUIRE(obj);
  return *obj;
}

// Objects by key, as a store holds them.
class held_map final : public held_objects {
public:
  void hold(object_ptr obj) { objects_[std::string(obj->key())] = std::move(obj); }

  object_ptr take(std::string_view namespace_, std::string_view name) override {
    std::string key =
        namespace_.empty() ? std::string(name) : std::string(namespace_) + "/" + std::string(name);
    auto node = objects_.extract(key);
    return node ? std::move(node.mapped()) : nullptr;
  }

private:
  std::map<std::string, object_ptr> objects_;
};

std::string pod_list(const std::vector<std::string>& items) {
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"99"},)"
                     R"("items":[)";
  for (std::size_t i = 0; i < items.size(); ++i)
    body += (i ? "," : "") + items[i];
  return body + "]}";
}

} // namespace

TEST_CASE("an object at the held object's resourceVersion is the held object") {
  held_map held;
  auto web = parsed(pod("default", "web", "42"));
  auto node = parsed(pod("", "node-1", "7"));
  held.hold(web);
  held.hold(node);

  auto same = object::parse(pod("default", "web", "42", "Pending"), nullptr, nullptr, &held);
  REQUIRE(same);
  CHECK(same->get() == web.get()); // the resourceVersion says it is the same state
  auto again = object::parse(pod("default", "web", "42"), nullptr, nullptr, &held);
  REQUIRE(again);
  CHECK(again->get() != web.get()); // taken: a list names an object once

  auto cluster_scoped = object::parse(pod("", "node-1", "7"), nullptr, nullptr, &held);
  REQUIRE(cluster_scoped);
  CHECK(cluster_scoped->get() == node.get());

  held.hold(web);
  auto newer = object::parse(pod("default", "web", "43", "Succeeded"), nullptr, nullptr, &held);
  REQUIRE(newer);
  CHECK(newer->get() != web.get());
  CHECK((*newer)->meta().resource_version == "43");
  CHECK((*newer)->tree().at("status").at("phase") == "Succeeded");
  CHECK(object::parse(pod("default", "web", "42"), nullptr, nullptr, &held)->get() != web.get());

  auto elsewhere = object::parse(pod("other", "web", "42"), nullptr, nullptr, &held);
  REQUIRE(elsewhere);
  CHECK(elsewhere->get() != web.get());
  CHECK((*elsewhere)->key() == "other/web");

  auto unheld = object::parse(pod("default", "db", "42"), nullptr, nullptr, &held);
  REQUIRE(unheld);
  CHECK((*unheld)->key() == "default/db");
}

TEST_CASE("held objects come back through managedFields' cut, not through a tree transform") {
  auto cut = drop_managed_fields();
  held_map held;
  auto web = parsed(pod("default", "web", "42"), cut.get());
  held.hold(web);
  auto through_cut = object::parse_padded(pod("default", "web", "42"), cut.get(), nullptr, &held);
  REQUIRE(through_cut);
  CHECK(through_cut->get() == web.get());

  // Any other transform needs a tree of the text, made before anything is looked up.
  const object_transform relabel = [](boost::json::value& v) {
    v.at("metadata").as_object()["labels"] = boost::json::object{{"seen", "yes"}};
  };
  auto through_tree = object::parse(pod("default", "web", "42"), &relabel, nullptr, &held);
  REQUIRE(through_tree);
  CHECK(through_tree->get() != web.get());
  CHECK((*through_tree)->meta().label("seen") == "yes");
}

TEST_CASE("bad text is an error even when it names a held object") {
  held_map held;
  held.hold(parsed(pod("default", "web", "42")));
  std::string truncated = pod("default", "web", "42");
  truncated.pop_back();
  auto broken = object::parse(truncated, nullptr, nullptr, &held);
  REQUIRE_FALSE(broken);
  CHECK(broken.err().code == errc::invalid_json);
}

TEST_CASE("a list decoder hands on held objects from when its slot is filled") {
  auto held = std::make_shared<held_map>();
  auto a = parsed(pod("ns", "a", "1"));
  auto b = parsed(pod("ns", "b", "2"));
  auto c = parsed(pod("ns", "c", "3"));
  held->hold(a);
  held->hold(b);
  held->hold(c);
  // a and c unchanged, b changed, d new; the same items twice, the slot filled in between.
  const std::vector<std::string> items{pod("ns", "a", "1"), pod("ns", "b", "5"),
                                       pod("ns", "c", "3"), pod("ns", "d", "4")};
  const std::string body = pod_list(items);
  const std::size_t second_item = body.find(R"({"kind")", body.find(R"("items":[)") + 10);
  REQUIRE(second_item != std::string::npos);

  held_objects_slot slot;
  decode_options options;
  options.held = &slot;
  list_decoder decoder(options);
  std::vector<object_ptr> out;
  // The first item arrives before the slot is filled: it is made.
  REQUIRE(decoder.feed(std::string_view(body).substr(0, second_item), out));
  REQUIRE(out.size() == 1);
  CHECK(out[0].get() != a.get());
  slot.fill(held);
  REQUIRE(decoder.feed(std::string_view(body).substr(second_item), out));
  auto page = decoder.finish(out);
  REQUIRE(page);
  REQUIRE(out.size() == 4);
  CHECK(out[1].get() != b.get());
  CHECK(out[1]->meta().resource_version == "5");
  CHECK(out[2].get() == c.get());
  CHECK(out[3]->key() == "ns/d");
  // Emptied, the slot hands on nothing more.
  slot.empty();
  list_decoder again(options);
  std::vector<object_ptr> none_held;
  REQUIRE(again.feed(body, none_held));
  REQUIRE(again.finish(none_held));
  REQUIRE(none_held.size() == 4);
  CHECK(none_held[2].get() != c.get());
}
