#include "protocol/decode.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace kinformer;

namespace {

const std::string pod_list = R"({
  "kind": "PodList", "apiVersion": "v1",
  "metadata": {"resourceVersion": "1234", "continue": "tok-2", "remainingItemCount": 7},
  "items": [
    {"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "10",
                  "labels": {"app": "web", "city": "Zürich"},
                  "managedFields": [{"manager": "kubectl"}]},
     "spec": {"nodeName": "n1"}},
    {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "b", "namespace": "ns"}}
  ]
})";

const std::string expired_status = R"json({"kind": "Status", "apiVersion": "v1", "metadata": {},
  "status": "Failure", "message": "too old resource version: 1 (5)", "reason": "Expired",
  "code": 410})json";

std::string added_line(std::string_view name) {
  return R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":")" +
         std::string(name) + R"(","namespace":"ns","resourceVersion":"11"}}})";
}

error list_error(std::string_view body) {
  auto r = decode_list(body);
  INFO(body);
  REQUIRE_FALSE(r.ok());
  return r.err();
}

error event_error(std::string_view line) {
  auto r = decode_watch_event(line);
  INFO(line);
  REQUIRE_FALSE(r.ok());
  return r.err();
}

} // namespace

TEST_CASE("a Status body decodes with its reason, causes and retry hint") {
  auto s = decode_status(R"({"kind":"Status","status":"Failure","code":429,
    "reason":"TooManyRequests","message":"slow down",
    "details":{"causes":[{"type":"A","message":"m"},{"type":"B"},{"message":"no type"}, 5],
               "retryAfterSeconds":3}})");
  REQUIRE(s.has_value());
  CHECK(s->code == 429);
  CHECK(s->status_ == "Failure");
  CHECK(s->reason == "TooManyRequests");
  CHECK(s->message == "slow down");
  CHECK(s->cause_types == std::vector<std::string>{"A", "B"});
  CHECK(s->retry_after_seconds == 3);
  CHECK_FALSE(s->is_expired());
  CHECK(s->describe() == "TooManyRequests (429): slow down [causes: A B] [retry after 3s]");

  auto expired = decode_status(expired_status);
  REQUIRE(expired.has_value());
  CHECK(expired->is_expired());
  CHECK(expired->describe() == "Expired (410): too old resource version: 1 (5)");
  CHECK(decode_status(R"({"kind":"Status","reason":"Gone"})")->is_expired());
  CHECK(decode_status(R"({"kind":"Status"})")->describe() == "Status");
}

TEST_CASE("decode_status is nullopt for anything that is not a Status") {
  CHECK_FALSE(decode_status(R"({"kind":"Pod"})").has_value());
  CHECK_FALSE(decode_status(R"({"code":410})").has_value());
  CHECK_FALSE(decode_status(R"({"kind":5})").has_value());
  CHECK_FALSE(decode_status("[]").has_value());
  CHECK_FALSE(decode_status("").has_value());
  CHECK_FALSE(decode_status("not json").has_value());
  CHECK_FALSE(decode_status(R"({"kind":"Status")").has_value()); // truncated
}

TEST_CASE("a Status with wrongly typed fields keeps what it can") {
  auto s = decode_status(R"({"kind":"Status","code":"410","reason":7,"message":"m",
                             "details":{"causes":{"type":"x"},"retryAfterSeconds":1e99}})");
  REQUIRE(s.has_value());
  CHECK(s->code == 0);
  CHECK(s->reason.empty());
  CHECK(s->message == "m");
  CHECK(s->cause_types.empty());
  CHECK_FALSE(s->retry_after_seconds.has_value());
  CHECK(decode_status(R"({"kind":"Status","code":99999999999})")->code == 0); // not an int
}

TEST_CASE("a too-large resource version is recognised as client-go does") {
  auto with_cause = decode_status(R"({"kind":"Status","code":504,"reason":"Timeout",
    "message":"Too large resource version: 20, current: 10",
    "details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],
               "retryAfterSeconds":1}})");
  REQUIRE(with_cause.has_value());
  CHECK(with_cause->is_too_large_resource_version());
  // Servers before 1.19 set no cause type, only the message.
  CHECK(decode_status(R"({"kind":"Status","code":504,"reason":"Timeout",
    "message":"Too large resource version: 20, current: 10"})")
            ->is_too_large_resource_version());
  CHECK_FALSE(decode_status(R"({"kind":"Status","code":504,"reason":"Timeout",
    "message":"request timed out"})")
                  ->is_too_large_resource_version());
  CHECK_FALSE(decode_status(R"({"kind":"Status","code":500,
    "message":"Too large resource version"})")
                  ->is_too_large_resource_version());
  CHECK_FALSE(decode_status(expired_status)->is_too_large_resource_version());
}

TEST_CASE("a List decodes its page metadata and items") {
  auto page = decode_list(pod_list);
  REQUIRE(page.ok());
  CHECK(page->kind == "PodList");
  CHECK(page->resource_version == "1234");
  CHECK(page->continue_token == "tok-2");
  CHECK(page->remaining_item_count == 7);
  REQUIRE(page->items.size() == 2);
  const auto& a = *page->items[0];
  // Items of typed lists lack kind and apiVersion: they come from the list.
  CHECK(a.kind() == "Pod");
  CHECK(a.api_version() == "v1");
  CHECK(a.key() == "ns/a");
  CHECK(a.meta().resource_version == "10");
  CHECK(a.meta().label("city") == "Zürich");
  CHECK(field_value(a, "spec.nodeName") == "n1");
  CHECK(page->items[1]->key() == "ns/b");
}

TEST_CASE("decoded items own their storage and outlive the body") {
  object_ptr kept;
  {
    std::string body = pod_list;
    auto page = decode_list(body);
    REQUIRE(page.ok());
    kept = page->items[0];
    body.assign(body.size(), 'x');
  }
  CHECK(kept->meta().name == "a");
  CHECK(kept->meta().label("app") == "web");
  CHECK(boost::json::parse(kept->to_json()).at("spec").at("nodeName") == "n1");
}

TEST_CASE("item kind and apiVersion are filled only when both are missing") {
  auto page = decode_list(R"({"kind":"DeploymentList","apiVersion":"apps/v1","items":[
    {"metadata":{"name":"x"}},
    {"kind":"Deployment","metadata":{"name":"y"}},
    {"apiVersion":"apps/v1beta1","metadata":{"name":"z"}},
    {"kind":"","apiVersion":null,"metadata":{"name":"w"}}]})");
  REQUIRE(page.ok());
  REQUIRE(page->items.size() == 4);
  CHECK(page->items[0]->kind() == "Deployment");
  CHECK(page->items[0]->api_version() == "apps/v1");
  CHECK(page->items[1]->kind() == "Deployment");
  CHECK(page->items[1]->api_version().empty());
  CHECK(page->items[2]->kind().empty());
  CHECK(page->items[2]->api_version() == "apps/v1beta1");
  CHECK(page->items[3]->kind() == "Deployment");
  CHECK(page->items[3]->api_version() == "apps/v1");

  // Without a "...List" kind there is nothing to infer.
  auto unnamed = decode_list(R"({"kind":"List","items":[{"metadata":{"name":"x"}}]})");
  REQUIRE(unnamed.ok());
  CHECK(unnamed->items[0]->kind().empty());
}

TEST_CASE("items are cut out of the body exactly as a whole parse sees them") {
  // Strings with quotes, backslashes and brackets, nested arrays, odd spacing and an "items"
  // key inside an item: the structural scan must find the same items as a full parse.
  const std::string body = "{ \"metadata\" : {\"resourceVersion\":\"5\", \"x\":[[],{}]},\n"
                           "  \"items\" :\t[ {\"metadata\":{\"name\":\"q\\\"]}\\\\\"}},"
                           "{\"metadata\":{\"name\":\"b\",\"labels\":{\"k\":\"[{\\\\\"}},"
                           "\"items\":[1,[2,{\"a\":\"}\"}]]} ,\r\n"
                           "{\"metadata\":{\"name\":\"\\u0063\"}} ],"
                           "\"kind\":\"PodList\",\"apiVersion\":\"v1\" }";
  const auto whole = boost::json::parse(body);
  auto page = decode_list(body);
  REQUIRE(page.ok());
  CHECK(page->kind == "PodList");
  CHECK(page->resource_version == "5");
  const auto& items = whole.at("items").as_array();
  REQUIRE(page->items.size() == items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    INFO(i);
    auto expected = items[i];
    expected.as_object()["kind"] = "Pod";
    expected.as_object()["apiVersion"] = "v1";
    CHECK(page->items[i]->tree() == expected);
  }
  CHECK(page->items[0]->meta().name == "q\"]}\\");
  CHECK(page->items[1]->meta().label("k") == "[{\\");
  CHECK(page->items[2]->meta().name == "c");

  // Two "items" keys: items are handed on as they arrive, so the second cannot replace the
  // first: the List is refused.
  auto twice = decode_list(R"({"items":[{"metadata":{"name":"a"}}],"items":[]})");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.err().code == errc::invalid_object);
}

TEST_CASE("an empty or last List page") {
  auto page = decode_list(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},
                              "items":[]})");
  REQUIRE(page.ok());
  CHECK(page->items.empty());
  CHECK(page->continue_token.empty());
  CHECK_FALSE(page->remaining_item_count.has_value());
  auto null_items = decode_list(R"({"kind":"PodList","metadata":null,"items":null})");
  REQUIRE(null_items.ok());
  CHECK(null_items->items.empty());
  CHECK(null_items->resource_version.empty());
}

TEST_CASE("a transform runs on every list item and watch object") {
  object_transform drop_managed_fields = [](boost::json::value& v) {
    if (auto* o = v.if_object())
      if (auto* m = o->if_contains("metadata"); m && m->is_object())
        m->get_object().erase("managedFields");
  };
  decode_options options{&drop_managed_fields};
  auto page = decode_list(pod_list, options);
  REQUIRE(page.ok());
  CHECK(page->items[0]->tree().at("metadata").as_object().count("managedFields") == 0);
  CHECK(page->items[0]->kind() == "Pod"); // the transform sees the filled-in type

  auto event = decode_watch_event(
      R"({"type":"MODIFIED","object":{"metadata":{"name":"p","managedFields":[]}}})", options);
  REQUIRE(event.ok());
  CHECK(event->object->tree().at("metadata").as_object().count("managedFields") == 0);
}

TEST_CASE("a Status instead of a List is an errc::status error") {
  auto e = list_error(expired_status);
  CHECK(e.code == errc::status);
  CHECK(e.message == "Expired (410): too old resource version: 1 (5)");
}

TEST_CASE("malformed, truncated and wrongly typed Lists are clear errors") {
  CHECK(list_error("").code == errc::invalid_json);
  CHECK(list_error("{\"kind\":").code == errc::invalid_json);
  CHECK(list_error(pod_list + "}").code == errc::invalid_json); // trailing garbage
  // Every truncation of a valid body fails cleanly.
  for (std::size_t n = 0; n < pod_list.size(); ++n) {
    auto r = decode_list(std::string_view(pod_list).substr(0, n));
    INFO(n);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::invalid_json);
  }
  auto truncated = list_error(R"({"kind":"PodList","items":[{"metadata":)");
  CHECK(truncated.message == "List: the body ended early (truncated)");

  CHECK(list_error("[]").message == "a List must be a JSON object, found an array");
  CHECK(list_error("42").code == errc::invalid_object);
  CHECK(list_error(R"({"kind":5})").message == "List.kind must be a string, found a number");
  CHECK(list_error(R"({"items":{}})").message == "List items must be an array, found an object");
  CHECK(list_error(R"({"metadata":[]})").code == errc::invalid_object);
  CHECK(list_error(R"({"metadata":{"resourceVersion":12}})").message ==
        "List metadata.resourceVersion must be a string, found a number");
  CHECK(list_error(R"({"metadata":{"continue":true}})").code == errc::invalid_object);
  CHECK(list_error(R"({"items":[{"metadata":{}}, 3]})").message ==
        "List items[1] must be an object, found a number");
  CHECK(list_error(R"({"items":[null]})").code == errc::invalid_object);
  auto bad_item =
      list_error(R"({"items":[{"metadata":{"name":"ok"}},{"metadata":{"labels":[]}}]})");
  CHECK(bad_item.code == errc::invalid_object);
  CHECK(bad_item.message.rfind("List items[1]: ", 0) == 0);
}

TEST_CASE("remainingItemCount must be a 64-bit integer") {
  auto count = [](std::string_view value) {
    return decode_list(R"({"metadata":{"remainingItemCount":)" + std::string(value) + "}}");
  };
  CHECK(count("9223372036854775807")->remaining_item_count == INT64_MAX);
  CHECK(count("0")->remaining_item_count == 0);
  CHECK(count("null")->remaining_item_count == std::nullopt);
  for (auto bad : {"18446744073709551615", "99999999999999999999999", "1e30", "1.5", "\"7\""}) {
    auto r = count(bad);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.err().code == errc::invalid_object);
    CHECK(r.err().message.find("remainingItemCount must be a 64-bit integer") != std::string::npos);
  }
  // Numbers too large for a double are a parse error, not a crash.
  CHECK(count("1e999999").ok() == false);
}

TEST_CASE("watch events of every type") {
  struct expectation {
    const char* type;
    event_type expected;
  };
  for (auto [type, expected] :
       {expectation{"ADDED", event_type::added}, expectation{"MODIFIED", event_type::modified},
        expectation{"DELETED", event_type::deleted},
        expectation{"BOOKMARK", event_type::bookmark}}) {
    auto line =
        std::string(R"({"type":")") + type +
        R"(","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"n","resourceVersion":"77"}}})";
    auto e = decode_watch_event(line);
    INFO(line);
    REQUIRE(e.ok());
    CHECK(e->type == expected);
    CHECK(std::string(to_string(e->type)) == type);
    REQUIRE(e->object);
    CHECK(e->object->key() == "n/p");
    CHECK(e->object->meta().resource_version == "77");
    CHECK_FALSE(e->error.has_value());
    CHECK_FALSE(e->is_initial_events_end());
  }
}

TEST_CASE("an ERROR event carries a Status") {
  auto e = decode_watch_event(R"({"type":"ERROR","object":)" + expired_status + "}");
  REQUIRE(e.ok());
  CHECK(e->type == event_type::error);
  CHECK(std::string(to_string(e->type)) == "ERROR");
  CHECK_FALSE(e->object);
  REQUIRE(e->error.has_value());
  CHECK(e->error->code == 410);
  CHECK(e->error->is_expired());

  auto gone = decode_watch_event(R"({"type":"ERROR","object":{"kind":"Status","code":410,
                                     "reason":"Gone","message":"old"}})");
  REQUIRE(gone.ok());
  CHECK(gone->error->reason == "Gone");
  CHECK(gone->error->is_expired());
}

TEST_CASE("the initial-events-end bookmark is recognised by its annotation") {
  auto bookmark = [](std::string_view annotations, std::string_view type = "BOOKMARK") {
    auto e = decode_watch_event(
        R"({"type":")" + std::string(type) +
        R"(","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"99","annotations":)" +
        std::string(annotations) + "}}}");
    REQUIRE(e.ok());
    return *e;
  };
  auto end = bookmark(R"({"k8s.io/initial-events-end":"true"})");
  CHECK(end.is_initial_events_end());
  CHECK(end.object->meta().resource_version == "99");
  CHECK_FALSE(bookmark(R"({"k8s.io/initial-events-end":"false"})").is_initial_events_end());
  CHECK_FALSE(bookmark(R"({})").is_initial_events_end());
  CHECK_FALSE(bookmark("null").is_initial_events_end());
  CHECK_FALSE(bookmark(R"({"k8s.io/initial-events-end":"true"})", "ADDED").is_initial_events_end());
}

TEST_CASE("bad watch lines are clear errors") {
  CHECK(event_error("").code == errc::invalid_json);
  CHECK(event_error("   ").code == errc::invalid_json);
  CHECK(event_error(added_line("p") + "x").code == errc::invalid_json);
  CHECK(event_error(added_line("p") + added_line("q")).code == errc::invalid_json);
  CHECK(event_error("[1,2]").message == "a watch event must be a JSON object, found an array");
  CHECK(event_error(R"({"object":{}})").message == "a watch event needs a string 'type'");
  CHECK(event_error(R"({"type":1,"object":{}})").code == errc::invalid_object);
  CHECK(event_error(R"({"type":"UPSERTED","object":{}})").message ==
        "unknown watch event type 'UPSERTED'");
  CHECK(event_error(R"({"type":"added","object":{}})").code == errc::invalid_object);
  CHECK(event_error(R"({"type":"ADDED"})").message ==
        "a watch event of type ADDED needs an 'object' that is a JSON object, found nothing");
  CHECK(event_error(R"({"type":"ERROR","object":"boom"})").message ==
        "a watch event of type ERROR needs an 'object' that is a JSON object, found a string");
  CHECK(event_error(R"({"type":"DELETED","object":{"metadata":{"name":1}}})").message ==
        "DELETED event object: metadata.name must be a string, found a number");
  CHECK(event_error("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\"}}}").code ==
        errc::invalid_json); // invalid UTF-8
}

TEST_CASE("every split of a watch line is a clean error, the whole line decodes") {
  const std::string line = added_line("split-me");
  for (std::size_t n = 0; n < line.size(); ++n) {
    auto head = decode_watch_event(std::string_view(line).substr(0, n));
    auto tail = decode_watch_event(std::string_view(line).substr(n));
    INFO(n);
    CHECK_FALSE(head.ok());
    if (n > 0)
      CHECK_FALSE(tail.ok());
  }
  auto whole = decode_watch_event(line);
  REQUIRE(whole.ok());
  CHECK(whole->object->meta().name == "split-me");
}

TEST_CASE("unicode survives decoding") {
  auto e = decode_watch_event(
      R"({"type":"ADDED","object":{"metadata":{"name":"p","annotations":{"note":"caf\u00e9 \ud83d\ude00 日本"}}}})");
  REQUIRE(e.ok());
  CHECK(e->object->meta().annotation("note") == "café 😀 日本");
  // A lone surrogate escape is not valid UTF-16: rejected.
  CHECK(event_error(R"({"type":"ADDED","object":{"metadata":{"name":"\ud83d"}}})").code ==
        errc::invalid_json);
}

TEST_CASE("nesting deeper than the limit is an error, not a stack overflow") {
  std::string deep = R"({"type":"ADDED","object":{"spec":)";
  for (int i = 0; i < 100000; ++i)
    deep += "[";
  auto r = decode_watch_event(deep);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::invalid_json);

  std::string fine = R"({"type":"ADDED","object":{"spec":)";
  for (int i = 0; i < 100; ++i)
    fine += "[";
  for (int i = 0; i < 100; ++i)
    fine += "]";
  fine += "}}";
  CHECK(decode_watch_event(fine).ok());
}

TEST_CASE("mutated List bodies and watch lines decode or fail cleanly") {
  // Deterministic: a fixed seed; each case edits a valid document in one to three places.
  std::mt19937 rng(7);
  const std::string_view alphabet = "{}[]\":,0123456789.-eE\\ ntrufalsKindStatusitemsxé";
  const std::vector<std::string> seeds = {pod_list, added_line("m"), expired_status,
                                          R"({"type":"ERROR","object":)" + expired_status + "}"};
  int decoded = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text = seeds[i % seeds.size()];
    for (int edits = 1 + i % 3; edits > 0; --edits) {
      std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(rng);
      char c = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
      switch (rng() % 3) {
      case 0:
        text[at] = c;
        break;
      case 1:
        text.insert(text.begin() + at, c);
        break;
      default:
        text.erase(at, 1);
        break;
      }
    }
    INFO(text);
    auto list = decode_list(text);
    auto event = decode_watch_event(text);
    auto is_clean = [](const error& e) {
      return e.code == errc::invalid_json || e.code == errc::invalid_object ||
             e.code == errc::status;
    };
    if (!list)
      CHECK(is_clean(list.err()));
    if (!event)
      CHECK(is_clean(event.err()));
    decoded += list.ok() + event.ok();
    (void)decode_status(text);
  }
  CHECK(decoded > 0); // some edits keep the document valid, and those decode
}
