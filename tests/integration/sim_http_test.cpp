// The simulator's HTTP front, driven over loopback by a minimal synchronous Beast client.

#include "app/kubesim/simulator.hpp"
#include "app/kubesim/storage.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <deque>
#include <optional>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using namespace kinformer;
using namespace kinformer::sim;

namespace {

struct response {
  unsigned code = 0;
  std::string body;
  http::fields headers;

  json::value json() const { return json::parse(body); }
  std::string header(http::field f) const { return std::string(headers[f]); }
};

struct request_options {
  std::string body;
  std::string content_type = "application/json";
  std::string accept;
  std::string token;
};

request_options body(std::string text, std::string content_type = "application/json") {
  request_options out;
  out.body = std::move(text);
  out.content_type = std::move(content_type);
  return out;
}

request_options accepting(std::string accept) {
  request_options out;
  out.accept = std::move(accept);
  return out;
}

// A body's non-empty lines (a watch's events).
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (auto nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    if (nl > start)
      out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (start < text.size())
    out.push_back(text.substr(start));
  return out;
}

request_options bearer(std::string token) {
  request_options out;
  out.token = std::move(token);
  return out;
}

// A safety net against a hung test: blocking reads give up after a few seconds.
void set_receive_timeout(tcp::socket& socket) {
  timeval tv{5, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

http::request<http::string_body> make_request(const std::string& method, const std::string& target,
                                              const request_options& options) {
  http::request<http::string_body> req(http::string_to_verb(method), target, 11);
  req.set(http::field::host, "127.0.0.1");
  if (!options.accept.empty())
    req.set(http::field::accept, options.accept);
  if (!options.token.empty())
    req.set(http::field::authorization, "Bearer " + options.token);
  if (!options.body.empty()) {
    req.set(http::field::content_type, options.content_type);
    req.body() = options.body;
  }
  req.prepare_payload();
  return req;
}

response to_response(http::response<http::string_body>& res) {
  response out;
  out.code = res.result_int();
  out.body = res.body();
  out.headers = res.base();
  return out;
}

response call(std::uint16_t port, const std::string& method, const std::string& target,
              const request_options& options = {}) {
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  set_receive_timeout(socket);
  http::write(socket, make_request(method, target, options));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  http::read(socket, buffer, parser);
  return to_response(parser.get());
}

response get(std::uint16_t port, const std::string& target, const request_options& options = {}) {
  return call(port, "GET", target, options);
}

std::string configmap(const std::string& name, const std::string& label = "a") {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"(","labels":{"app":")" + label + R"("}},"data":{"k":"v"}})";
}

// A watch response read incrementally: header first, then one event line at a time.
class watch_stream {
public:
  watch_stream(std::uint16_t port, const std::string& target) : socket_(ioc_) {
    socket_.connect({net::ip::make_address("127.0.0.1"), port});
    set_receive_timeout(socket_);
    http::write(socket_, make_request("GET", target, {}));
    parser_.body_limit(boost::none);
    chunk_callback_ = [this](std::uint64_t, std::string_view body, beast::error_code&) {
      pending_.append(body);
      for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n')) {
        lines_.push_back(pending_.substr(0, nl));
        pending_.erase(0, nl + 1);
      }
      return body.size();
    };
    parser_.on_chunk_body(chunk_callback_);
    http::read_header(socket_, buffer_, parser_);
  }

  unsigned code() const { return parser_.get().result_int(); }
  bool chunked() const { return parser_.chunked(); }

  // The next event as JSON; nullopt when the stream ended with its terminating chunk.
  // Throws (a Beast system_error) when the connection breaks without one.
  std::optional<json::value> next() {
    while (lines_.empty()) {
      if (parser_.is_done())
        return std::nullopt;
      http::read_some(socket_, buffer_, parser_);
    }
    auto line = std::move(lines_.front());
    lines_.pop_front();
    return json::parse(line);
  }

private:
  net::io_context ioc_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  http::response_parser<http::empty_body> parser_;
  std::function<std::size_t(std::uint64_t, std::string_view, beast::error_code&)> chunk_callback_;
  std::string pending_;
  std::deque<std::string> lines_;
};

std::string type_of(const json::value& event) {
  return std::string(event.at("type").as_string());
}

std::string name_of(const json::value& event) {
  return std::string(event.at("object").at("metadata").at("name").as_string());
}

std::string rv_of(const json::value& doc) {
  return std::string(doc.at("metadata").at("resourceVersion").as_string());
}

struct running_simulator {
  explicit running_simulator(simulator_options options = {}) : sim(std::move(options)) {
    auto started = sim.start();
    REQUIRE(started.ok());
  }
  std::uint16_t port() { return sim.port(); }
  simulator sim;
};

} // namespace

TEST_CASE("discovery documents", "[sim_http]") {
  running_simulator s;
  auto version = get(s.port(), "/version");
  REQUIRE(version.code == 200);
  CHECK(version.json().at("major").as_string() == "1");
  CHECK(version.json().at("minor").as_string() == "29");

  auto api = get(s.port(), "/api");
  CHECK(api.json().at("kind").as_string() == "APIVersions");
  CHECK(api.json().at("versions").as_array().at(0).as_string() == "v1");

  // kubectl asks for aggregated discovery first; plain JSON makes it fall back.
  auto apis = get(s.port(), "/apis",
                  accepting("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                            "application/json"));
  REQUIRE(apis.code == 200);
  CHECK(apis.header(http::field::content_type) == "application/json");
  auto groups = apis.json().at("groups").as_array();
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].at("name").as_string() == "apps");
  CHECK(groups[0].at("preferredVersion").at("groupVersion").as_string() == "apps/v1");
  CHECK(groups[1].at("name").as_string() == "coordination.k8s.io");
  CHECK(groups[2].at("name").as_string() == "events.k8s.io");

  auto core = get(s.port(), "/api/v1").json();
  CHECK(core.at("groupVersion").as_string() == "v1");
  bool found_pods = false;
  for (const auto& r : core.at("resources").as_array()) {
    if (r.at("name").as_string() != "pods")
      continue;
    found_pods = true;
    CHECK(r.at("kind").as_string() == "Pod");
    CHECK(r.at("singularName").as_string() == "pod");
    CHECK(r.at("namespaced").as_bool());
    CHECK(r.at("shortNames").as_array().at(0).as_string() == "po");
  }
  CHECK(found_pods);
  auto apps = get(s.port(), "/apis/apps/v1").json();
  CHECK(apps.at("resources").as_array().at(0).at("kind").as_string() == "Deployment");
  CHECK(get(s.port(), "/apis/apps").json().at("kind").as_string() == "APIGroup");

  for (auto missing : {"/apis/nope/v1", "/apis/nope", "/openapi/v3/apis/nope/v1", "/openapi/v1",
                       "/nothing/here", "/api/v2"}) {
    auto r = get(s.port(), missing);
    CHECK(r.code == 404);
    CHECK(r.json().at("kind").as_string() == "Status");
    CHECK(r.json().at("reason").as_string() == "NotFound");
  }
  CHECK(call(s.port(), "POST", "/version").code == 405);
}

// The PATCH operation of `kind` in an OpenAPI v3 group-version document, or null.
const json::object* patch_operation_of(const json::value& doc, std::string_view kind) {
  for (const auto& path : doc.at("paths").as_object()) {
    const auto* patch = path.value().as_object().if_contains("patch");
    if (patch && patch->at("x-kubernetes-group-version-kind").at("kind").as_string() == kind)
      return &patch->as_object();
  }
  return nullptr;
}

TEST_CASE("OpenAPI v3 declares server-side field validation for every kind", "[sim_http]") {
  running_simulator s;
  s.sim.store().register_resource({{"example.com", "v1", "widgets"},
                                   "Widget",
                                   "widget",
                                   resource_scope::namespaced,
                                   {},
                                   {},
                                   {}});
  auto index = get(s.port(), "/openapi/v3");
  REQUIRE(index.code == 200);
  const auto index_doc = index.json();
  const auto& paths = index_doc.at("paths").as_object();
  for (auto gv : {"api/v1", "apis/apps/v1", "apis/example.com/v1"}) {
    INFO(gv);
    REQUIRE(paths.contains(gv));
    std::string url(paths.at(gv).at("serverRelativeURL").as_string());
    CHECK(url.starts_with("/openapi/v3/" + std::string(gv) + "?hash="));
    auto doc = get(s.port(), url);
    REQUIRE(doc.code == 200);
    CHECK(doc.json().at("openapi").as_string().starts_with("3."));
  }

  // kubectl looks for a PATCH operation tagged with the kind that takes fieldValidation.
  auto core = get(s.port(), "/openapi/v3/api/v1").json();
  const auto* pod_patch = patch_operation_of(core, "Pod");
  REQUIRE(pod_patch != nullptr);
  bool field_validation = false;
  for (const auto& p : pod_patch->at("parameters").as_array())
    field_validation |= p.at("name") == "fieldValidation" && p.at("in") == "query";
  CHECK(field_validation);
  CHECK(core.at("paths").as_object().contains("/api/v1/namespaces/{namespace}/pods/{name}"));
  CHECK(core.at("paths").as_object().contains("/api/v1/nodes/{name}"));
  // Schemas accept any field.
  const auto& pod_schema = core.at("components").at("schemas").at("io.k8s.api.core.v1.Pod");
  CHECK(pod_schema.at("x-kubernetes-preserve-unknown-fields").as_bool());
  auto custom = get(s.port(), "/openapi/v3/apis/example.com/v1").json();
  CHECK(patch_operation_of(custom, "Widget") != nullptr);
  CHECK(custom.at("components").at("schemas").as_object().contains("com.example.v1.Widget"));

  // v2 in JSON; a client that only takes protobuf is told so.
  auto v2 = get(s.port(), "/openapi/v2", accepting("application/json"));
  REQUIRE(v2.code == 200);
  CHECK(v2.json().at("swagger").as_string() == "2.0");
  CHECK(v2.json().at("definitions").as_object().contains("io.k8s.api.apps.v1.Deployment"));
  auto protobuf_only = get(s.port(), "/openapi/v2",
                           accepting("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"));
  CHECK(protobuf_only.code == 406);
  CHECK(call(s.port(), "POST", "/openapi/v3").code == 405);
}

TEST_CASE("dryRun=All validates and answers but stores nothing", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  const std::string collection = "/api/v1/namespaces/default/configmaps";
  auto& store = s.sim.store();
  const auto rv_before = store.current_resource_version();

  auto preview = call(port, "POST", collection + "?dryRun=All", body(configmap("dry")));
  REQUIRE(preview.code == 201);
  CHECK(preview.json().at("metadata").at("name").as_string() == "dry");
  CHECK(preview.json().at("metadata").at("uid").is_string());
  CHECK_FALSE(preview.json().at("metadata").as_object().contains("resourceVersion"));
  CHECK(get(port, collection + "/dry").code == 404);
  CHECK(store.current_resource_version() == rv_before);

  // Validation still runs: a dry run of an invalid or conflicting write fails the same way.
  CHECK(call(port, "POST", collection + "?dryRun=All", body(R"({"metadata":{}})")).code == 422);
  REQUIRE(call(port, "POST", collection, body(configmap("real"))).code == 201);
  CHECK(call(port, "POST", collection + "?dryRun=All", body(configmap("real"))).code == 409);
  auto stored = get(port, collection + "/real").json();
  const auto rv_stored = store.current_resource_version();

  auto patched = call(port, "PATCH", collection + "/real?dryRun=All",
                      body(R"({"data":{"k":"changed"}})", "application/merge-patch+json"));
  REQUIRE(patched.code == 200);
  CHECK(patched.json().at("data").at("k").as_string() == "changed");
  CHECK(rv_of(patched.json()) == rv_of(stored));
  auto put = call(port, "PUT", collection + "/real?dryRun=All", body(configmap("real", "other")));
  REQUIRE(put.code == 200);
  CHECK(put.json().at("metadata").at("labels").at("app").as_string() == "other");
  CHECK(call(port, "DELETE", collection + "/real?dryRun=All").code == 200);
  // DeleteOptions in the body work too.
  CHECK(call(port, "DELETE", collection + "/real", body(R"({"dryRun":["All"]})")).code == 200);
  CHECK(store.current_resource_version() == rv_stored);
  CHECK(get(port, collection + "/real").json() == stored);

  auto bad = call(port, "POST", collection + "?dryRun=Yes", body(configmap("x")));
  CHECK(bad.code == 422);
  CHECK(bad.json().at("reason").as_string() == "Invalid");
}

TEST_CASE("create, get, update, patch and delete", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  auto created =
      call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("one")));
  REQUIRE(created.code == 201);
  auto obj = created.json();
  CHECK(obj.at("metadata").at("namespace").as_string() == "default");
  CHECK(!obj.at("metadata").at("uid").as_string().empty());
  std::string rv = rv_of(obj);

  auto again = call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("one")));
  CHECK(again.code == 409);
  CHECK(again.json().at("reason").as_string() == "AlreadyExists");

  auto fetched = get(port, "/api/v1/namespaces/default/configmaps/one");
  REQUIRE(fetched.code == 200);
  CHECK(rv_of(fetched.json()) == rv);

  auto missing = get(port, "/api/v1/namespaces/default/configmaps/nope");
  CHECK(missing.code == 404);
  CHECK(missing.json().at("message").as_string() == "configmaps \"nope\" not found");

  // Update with the current resourceVersion succeeds; replaying it conflicts.
  json::value edited(fetched.json(), json::storage_ptr());
  edited.at("data").as_object()["k"] = "v2";
  auto updated =
      call(port, "PUT", "/api/v1/namespaces/default/configmaps/one", body(json::serialize(edited)));
  REQUIRE(updated.code == 200);
  CHECK(updated.json().at("data").at("k").as_string() == "v2");
  auto stale =
      call(port, "PUT", "/api/v1/namespaces/default/configmaps/one", body(json::serialize(edited)));
  CHECK(stale.code == 409);
  CHECK(stale.json().at("reason").as_string() == "Conflict");

  auto merged = call(port, "PATCH", "/api/v1/namespaces/default/configmaps/one",
                     body(R"({"data":{"extra":"x"}})", "application/merge-patch+json"));
  REQUIRE(merged.code == 200);
  CHECK(merged.json().at("data").at("extra").as_string() == "x");
  auto strategic = call(
      port, "PATCH", "/api/v1/namespaces/default/configmaps/one",
      body(R"({"metadata":{"labels":{"tier":"db"}}})", "application/strategic-merge-patch+json"));
  REQUIRE(strategic.code == 200);
  CHECK(strategic.json().at("metadata").at("labels").at("tier").as_string() == "db");
  // Server-side apply needs a field manager (sim_apply_test.cpp has the rest).
  auto apply = call(port, "PATCH", "/api/v1/namespaces/default/configmaps/one",
                    body("{}", "application/apply-patch+yaml"));
  CHECK(apply.code == 400);
  CHECK(apply.json().at("message") == "fieldManager is required for apply requests");
  auto applied = call(port, "PATCH", "/api/v1/namespaces/default/configmaps/one?fieldManager=t",
                      body(R"({"data":{"applied":"yes"}})", "application/apply-patch+yaml"));
  CHECK(applied.code == 200);
  CHECK(applied.json().at("data").at("applied") == "yes");

  CHECK(call(port, "PUT", "/api/v1/namespaces/default/configmaps").code == 405);
  CHECK(call(port, "POST", "/api/v1/configmaps", body(configmap("x"))).code == 405);
  CHECK(get(port, "/api/v1/configmaps/one").code == 404); // namespaced needs its namespace

  auto removed = call(port, "DELETE", "/api/v1/namespaces/default/configmaps/one");
  REQUIRE(removed.code == 200);
  CHECK(removed.json().at("metadata").at("name").as_string() == "one");
  CHECK(get(port, "/api/v1/namespaces/default/configmaps/one").code == 404);
  CHECK(call(port, "DELETE", "/api/v1/namespaces/default/configmaps/one").code == 404);
}

TEST_CASE("bad input gives Status errors", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  auto bad_json = call(port, "POST", "/api/v1/namespaces/default/configmaps",
                       body(R"({"kind":"ConfigMap","metadata":{"name":)"));
  CHECK(bad_json.code == 400);
  CHECK(bad_json.json().at("kind").as_string() == "Status");

  auto bad_selector = get(port, "/api/v1/pods?labelSelector=a%20in%20(b");
  CHECK(bad_selector.code == 400);
  CHECK(bad_selector.json().at("reason").as_string() == "BadRequest");
  CHECK(!bad_selector.json().at("message").as_string().empty());

  CHECK(get(port, "/api/v1/pods?fieldSelector=no.such.field%3Dx").code == 400);
  CHECK(get(port, "/api/v1/pods?limit=abc").code == 400);
  CHECK(get(port, "/api/v1/pods?%zz=1").code == 400);
  CHECK(get(port, "/api/v1/pods?watch=maybe").code == 400);
  CHECK(get(port, "/api/v1/pods?resourceVersionMatch=Sometimes&resourceVersion=1").code == 422);
  CHECK(get(port, "/api/v1/pods?resourceVersionMatch=NotOlderThan").code == 422);
  CHECK(get(port, "/api/v1/pods?sendInitialEvents=true").code == 422);
  CHECK(get(port, "/api/v1/namespaces/default/nodes").code == 404); // cluster-scoped
  CHECK(get(port, "/api/v1/namespaces/default/pods/x/exec").code == 404);

  auto bad_delete = call(port, "DELETE", "/api/v1/namespaces/default", body("{not json"));
  CHECK(bad_delete.code == 400);

  // A malformed request line is answered 400 and the connection closed, as Go's server does;
  // the server serves on.
  {
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect({net::ip::make_address("127.0.0.1"), port});
    set_receive_timeout(socket);
    net::write(socket, net::buffer(std::string("NOT HTTP AT ALL\r\n\r\n")));
    std::string answer;
    char buffer[4096];
    beast::error_code ec;
    while (!ec)
      answer.append(buffer, socket.read_some(net::buffer(buffer), ec));
    CHECK(answer.starts_with("HTTP/1.1 400"));
    CHECK(ec == net::error::eof);
  }
  CHECK(get(port, "/version").code == 200);
}

TEST_CASE("lists: selectors, paging, metadata-only, cluster scope", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  for (int i = 0; i < 5; ++i)
    REQUIRE(call(port, "POST", "/api/v1/namespaces/default/configmaps",
                 body(configmap("cm" + std::to_string(i), i % 2 ? "odd" : "even")))
                .code == 201);

  auto all = get(port, "/api/v1/configmaps");
  REQUIRE(all.code == 200);
  CHECK(all.json().at("kind").as_string() == "ConfigMapList");
  CHECK(all.json().at("items").as_array().size() == 5);

  auto odd = get(port, "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dodd");
  CHECK(odd.json().at("items").as_array().size() == 2);
  auto by_name = get(port, "/api/v1/configmaps?fieldSelector=metadata.name%3Dcm3");
  REQUIRE(by_name.json().at("items").as_array().size() == 1);

  // Pages of two, chained by continue tokens, see every item once.
  std::vector<std::string> names;
  std::string token;
  int pages = 0;
  do {
    std::string target = "/api/v1/namespaces/default/configmaps?limit=2";
    if (!token.empty())
      target += "&continue=" + token;
    auto page = get(port, target);
    REQUIRE(page.code == 200);
    auto doc = page.json();
    for (const auto& item : doc.at("items").as_array())
      names.emplace_back(item.at("metadata").at("name").as_string());
    auto* cont = doc.at("metadata").as_object().if_contains("continue");
    token = cont ? std::string(cont->as_string()) : std::string();
    ++pages;
  } while (!token.empty() && pages < 10);
  CHECK(pages == 3);
  CHECK(names == std::vector<std::string>{"cm0", "cm1", "cm2", "cm3", "cm4"});

  // kubectl asks for a Table; it gets the API server's, rows in key order.
  auto table = get(port, "/api/v1/configmaps",
                   accepting("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
  CHECK(table.json().at("kind").as_string() == "Table");
  CHECK(table.json().at("rows").as_array().size() == 5);
  CHECK(table.json().at("columnDefinitions").as_array().at(0).at("name").as_string() == "Name");

  auto meta = get(port, "/api/v1/configmaps",
                  accepting("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"));
  auto meta_doc = meta.json();
  CHECK(meta_doc.at("kind").as_string() == "PartialObjectMetadataList");
  CHECK(meta_doc.at("apiVersion").as_string() == "meta.k8s.io/v1");
  auto& first = meta_doc.at("items").as_array().at(0).as_object();
  CHECK(first.if_contains("data") == nullptr);
  CHECK(first.at("metadata").at("name").as_string() == "cm0");

  auto one = get(port, "/api/v1/namespaces/default/configmaps/cm1",
                 accepting("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"));
  CHECK(one.json().at("kind").as_string() == "PartialObjectMetadata");
  CHECK(one.json().as_object().if_contains("data") == nullptr);

  // What the simulator cannot produce is the API server's 406, as the read API answers it.
  CHECK(get(port, "/api/v1/configmaps", accepting("application/yaml")).code == 406);
  CHECK(get(port, "/api/v1/namespaces/default/configmaps/cm1",
            accepting("application/json;as=Scale;g=autoscaling;v=v1"))
            .code == 406);
  // A Table watch (kubectl get -w): one row per event, the columns in the first event's alone.
  auto table_watch = get(port, "/api/v1/configmaps?watch=1&timeoutSeconds=1",
                         accepting("application/json;as=Table;v=v1;g=meta.k8s.io"));
  REQUIRE(table_watch.code == 200);
  auto lines = split_lines(table_watch.body);
  REQUIRE(lines.size() == 5);
  auto first_event = json::parse(lines[0]);
  CHECK(first_event.at("type").as_string() == "ADDED");
  CHECK(first_event.at("object").at("kind").as_string() == "Table");
  CHECK(first_event.at("object").as_object().contains("columnDefinitions"));
  CHECK(json::parse(lines[1]).at("object").at("columnDefinitions").is_null());

  // A get of one object takes no ListOptions: they are ignored, as GetOptions ignores them.
  CHECK(get(port, "/api/v1/namespaces/default/configmaps/cm1?limit=x&resourceVersionMatch=Exact")
            .code == 200);

  // A watch of one object by name: on its item path, or under the /watch/ prefix.
  for (const std::string target : {"/api/v1/namespaces/default/configmaps/cm1?watch=1",
                                   "/api/v1/watch/namespaces/default/configmaps/cm1?"}) {
    auto one_watch = get(port, target + "&timeoutSeconds=1");
    REQUIRE(one_watch.code == 200);
    auto events = split_lines(one_watch.body);
    REQUIRE(events.size() == 1);
    CHECK(json::parse(events[0]).at("object").at("metadata").at("name").as_string() == "cm1");
  }

  // Cluster-scoped resources and namespaces themselves.
  REQUIRE(call(port, "POST", "/api/v1/nodes",
               body(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}})"))
              .code == 201);
  CHECK(get(port, "/api/v1/nodes/n1").json().at("kind").as_string() == "Node");
  CHECK(get(port, "/api/v1/namespaces/default").json().at("kind").as_string() == "Namespace");
  auto namespaces = get(port, "/api/v1/namespaces").json();
  CHECK(namespaces.at("items").as_array().size() >= 1);

  // Deleting a collection by selector.
  auto deleted =
      call(port, "DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Deven");
  CHECK(deleted.json().at("items").as_array().size() == 3);
  CHECK(get(port, "/api/v1/configmaps").json().at("items").as_array().size() == 2);

  // Expired continue tokens are 410.
  s.sim.store().compact();
  auto expired = get(port, "/api/v1/namespaces/default/configmaps?limit=1");
  auto cont = std::string(expired.json().at("metadata").at("continue").as_string());
  REQUIRE(
      call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("new"))).code ==
      201);
  s.sim.store().compact();
  auto gone = get(port, "/api/v1/namespaces/default/configmaps?limit=1&continue=" + cont);
  CHECK(gone.code == 410);
  CHECK(gone.json().at("reason").as_string() == "Expired");
}

TEST_CASE("keep-alive: several requests on one connection", "[sim_http]") {
  running_simulator s;
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), s.port()});
  set_receive_timeout(socket);
  beast::flat_buffer buffer;
  for (int i = 0; i < 3; ++i) {
    http::write(socket, make_request("GET", "/version", {}));
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    CHECK(res.result_int() == 200);
    CHECK(res.keep_alive());
  }
}

TEST_CASE("watch streams events, bookmarks and ends after timeoutSeconds", "[sim_http]") {
  simulator_options options;
  options.bookmark_interval = std::chrono::milliseconds(50);
  running_simulator s(options);
  auto port = s.port();
  auto created =
      call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("before")));
  auto rv = rv_of(created.json());

  watch_stream w(port, "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true"
                       "&timeoutSeconds=1&resourceVersion=" +
                           rv);
  CHECK(w.code() == 200);
  CHECK(w.chunked());
  REQUIRE(call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a"))).code ==
          201);
  REQUIRE(call(port, "DELETE", "/api/v1/namespaces/default/configmaps/before").code == 200);

  std::vector<std::string> seen;
  bool bookmarked = false;
  while (auto event = w.next()) {
    auto type = type_of(*event);
    if (type == "BOOKMARK") {
      bookmarked = true;
      continue;
    }
    seen.push_back(type + " " + name_of(*event));
  }
  // Ended by the terminating chunk after timeoutSeconds, not by a broken connection.
  CHECK(seen == std::vector<std::string>{"ADDED a", "DELETED before"});
  CHECK(bookmarked);
  CHECK(s.sim.open_watches() == 0);
}

TEST_CASE("watch from a compacted resourceVersion answers an ERROR 410 event", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  auto first = call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a")));
  auto rv = rv_of(first.json());
  REQUIRE(call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("b"))).code ==
          201);
  REQUIRE(call(port, "POST", "/sim/faults/compact").code == 200);

  watch_stream w(port, "/api/v1/configmaps?watch=true&resourceVersion=" + rv);
  CHECK(w.code() == 200);
  auto event = w.next();
  REQUIRE(event);
  CHECK(type_of(*event) == "ERROR");
  CHECK(event->at("object").at("code").as_int64() == 410);
  CHECK(event->at("object").at("reason").as_string() == "Expired");
  CHECK(!w.next());

  // fail-watches makes the next watch fail the same way.
  REQUIRE(call(port, "POST", "/sim/faults/fail-watches?count=1").code == 200);
  watch_stream failed(port, "/api/v1/configmaps?watch=true");
  auto error = failed.next();
  REQUIRE(error);
  CHECK(type_of(*error) == "ERROR");
}

TEST_CASE("streaming list: sendInitialEvents ends with the annotated bookmark", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  for (auto name : {"x", "y"})
    REQUIRE(
        call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap(name))).code ==
        201);
  watch_stream w(port, "/api/v1/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                       "&resourceVersionMatch=NotOlderThan&resourceVersion=&timeoutSeconds=5");
  auto a = w.next();
  auto b = w.next();
  auto end = w.next();
  REQUIRE((a && b && end));
  CHECK(type_of(*a) == "ADDED");
  CHECK(type_of(*b) == "ADDED");
  CHECK(type_of(*end) == "BOOKMARK");
  CHECK(end->at("object")
            .at("metadata")
            .at("annotations")
            .at("k8s.io/initial-events-end")
            .as_string() == "true");
}

TEST_CASE("watch faults: drop, stall and resume", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  const std::string target = "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30";

  SECTION("drop closes the connection without a terminating chunk") {
    watch_stream w(port, target);
    REQUIRE(
        call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a"))).code ==
        201);
    // The watch started at the current RV: the ADDED of "a" proves it is registered and live.
    auto added = w.next();
    REQUIRE(added);
    CHECK(name_of(*added) == "a");
    REQUIRE(call(port, "POST", "/sim/faults/drop-watches").code == 200);
    CHECK_THROWS_AS(w.next(), boost::system::system_error);
  }

  SECTION("stalled watches keep their events and deliver them on resume") {
    watch_stream w(port, target);
    REQUIRE(
        call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a"))).code ==
        201);
    REQUIRE(w.next());
    REQUIRE(call(port, "POST", "/sim/faults/stall-watches").code == 200);
    for (auto name : {"b", "c"})
      REQUIRE(
          call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap(name))).code ==
          201);
    REQUIRE(call(port, "POST", "/sim/faults/resume-watches").code == 200);
    auto b = w.next();
    auto c = w.next();
    REQUIRE((b && c));
    CHECK(name_of(*b) == "b");
    CHECK(name_of(*c) == "c");
  }
  CHECK(call(port, "GET", "/sim/faults/drop-watches").code == 405);
}

TEST_CASE("a watcher that falls hopelessly behind is closed, writers never block", "[sim_http]") {
  simulator_options options;
  options.watch_queue_limit = 50;
  running_simulator s(options);
  auto port = s.port();
  watch_stream w(port, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30");
  REQUIRE(s.sim.wait_for_open_watches(1)); // set up: its events queue within the limit
  s.sim.stall_watches();                   // nothing drains the queue now
  for (int i = 0; i < 200; ++i)
    REQUIRE(s.sim.store()
                .create({"", "v1", "configmaps"}, "default", configmap("c" + std::to_string(i)))
                .ok());
  s.sim.resume_watches();
  // What was queued drains, then the stream ends cleanly.
  int events = 0;
  while (w.next())
    ++events;
  CHECK(events == 50);
}

TEST_CASE("list faults: 429 with Retry-After and 500", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  REQUIRE(call(port, "POST", "/sim/faults/fail-lists?count=1&code=429&retryAfter=3").code == 200);
  auto throttled = get(port, "/api/v1/pods");
  CHECK(throttled.code == 429);
  CHECK(throttled.header(http::field::retry_after) == "3");
  CHECK(throttled.json().at("reason").as_string() == "TooManyRequests");
  CHECK(get(port, "/api/v1/pods").code == 200);

  REQUIRE(call(port, "POST", "/sim/faults/fail-lists?count=1&code=500").code == 200);
  CHECK(get(port, "/api/v1/pods").code == 500);
  CHECK(call(port, "POST", "/sim/faults/fail-lists?code=abc").code == 400);
}

TEST_CASE("write faults: the next writes fail unapplied, reads are untouched", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  REQUIRE(call(port, "POST", "/sim/faults/fail-writes?count=2&code=503").code == 200);
  CHECK(call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a"))).code ==
        503);
  CHECK(get(port, "/api/v1/namespaces/default/configmaps").code == 200);
  auto throttled =
      call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a")));
  CHECK(throttled.code == 503);
  CHECK(get(port, "/api/v1/namespaces/default/configmaps/a").code == 404);
  CHECK(call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a"))).code ==
        201);
  REQUIRE(call(port, "POST", "/sim/faults/fail-writes?count=1&code=429").code == 200);
  auto limited = call(port, "DELETE", "/api/v1/namespaces/default/configmaps/a");
  CHECK(limited.code == 429);
  CHECK(limited.header(http::field::retry_after) == "1");
  CHECK(get(port, "/api/v1/namespaces/default/configmaps/a").code == 200);
  CHECK(call(port, "POST", "/sim/faults/fail-writes?code=600").code == 400);
}

TEST_CASE("control: truth, custom resources, latency, added routes", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  REQUIRE(call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap("a"))).code ==
          201);
  auto truth = get(port, "/sim/truth?resource=configmaps").json().as_array();
  REQUIRE(truth.size() == 1);
  CHECK(truth[0].at("key").as_string() == "default/a");
  CHECK(get(port, "/sim/truth?resource=nothing").code == 404);
  CHECK(get(port, "/sim/truth?resource=configmaps&labelSelector=app%3Dnone").body == "[]");
  CHECK(get(port, "/sim/truth?resource=configmaps&labelSelector=%3D%3D").code == 400);
  s.sim.store().fail_next_lists(1, 500); // the truth is never failed by an armed fault
  CHECK(get(port, "/sim/truth?resource=configmaps").code == 200);
  REQUIRE(call(port, "POST", "/sim/faults/reset").code == 200); // disarms that list failure
  CHECK(get(port, "/api/v1/configmaps").code == 200);

  auto crd = R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced",
      "names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wd"]},
      "versions":[{"name":"v1","served":true,"storage":true}]}})";
  REQUIRE(call(port, "POST", "/sim/crds", body(crd)).code == 201);
  CHECK(call(port, "POST", "/sim/crds", body("[1,2")).code == 400);
  auto discovery = get(port, "/apis/example.com/v1").json();
  CHECK(discovery.at("resources").as_array().at(0).at("kind").as_string() == "Widget");
  auto widget = call(port, "POST", "/apis/example.com/v1/namespaces/default/widgets",
                     body(R"({"apiVersion":"example.com/v1","kind":"Widget",
                                  "metadata":{"name":"w1"},"spec":{"size":3}})"));
  CHECK(widget.code == 201);
  CHECK(get(port, "/apis/example.com/v1/widgets").json().at("items").as_array().size() == 1);

  s.sim.add_control_route("/sim/echo", [](const control_request& req) {
    return control_response{200, "text/plain",
                            req.method + " " + req.query.at("x") + " " + req.body};
  });
  auto echo = call(port, "POST", "/sim/echo/deep?x=1%202", body("hi"));
  CHECK(echo.code == 200);
  CHECK(echo.body == "POST 1 2 hi");
  CHECK(get(port, "/sim/unknown").code == 404);

  REQUIRE(call(port, "POST", "/sim/faults/latency?ms=150").code == 200);
  auto before = std::chrono::steady_clock::now();
  CHECK(get(port, "/version").code == 200);
  CHECK(std::chrono::steady_clock::now() - before >= std::chrono::milliseconds(150));
  s.sim.set_latency(std::chrono::milliseconds(0));
}

TEST_CASE("control: backup, restore to it or to now, resourceVersion gaps", "[sim_http]") {
  running_simulator s;
  auto port = s.port();
  auto create = [&](const std::string& name) {
    REQUIRE(
        call(port, "POST", "/api/v1/namespaces/default/configmaps", body(configmap(name))).code ==
        201);
  };
  auto keys = [&] {
    std::vector<std::string> out;
    auto truth = get(port, "/sim/truth?resource=configmaps").json();
    for (auto& v : truth.as_array())
      out.emplace_back(v.at("key").as_string());
    return out;
  };
  CHECK(call(port, "POST", "/sim/faults/restore?to=backup").code == 400); // none taken yet
  CHECK(call(port, "POST", "/sim/faults/restore?to=yesterday").code == 400);
  create("a");
  auto backup = call(port, "POST", "/sim/faults/backup");
  REQUIRE(backup.code == 200);
  CHECK(backup.json().at("objects").as_int64() >= 1);
  create("b");
  const auto before = s.sim.store().current_resource_version();

  REQUIRE(call(port, "POST", "/sim/faults/skip-revisions?count=50").code == 200);
  CHECK(s.sim.store().current_resource_version() == before + 50);
  CHECK(call(port, "POST", "/sim/faults/skip-revisions?count=x").code == 400);

  REQUIRE(call(port, "POST", "/sim/faults/restore").code == 200); // to now: objects stay
  CHECK(keys() == std::vector<std::string>{"default/a", "default/b"});
  REQUIRE(call(port, "POST", "/sim/faults/restore?to=backup").code == 200);
  CHECK(keys() == std::vector<std::string>{"default/a"});
  CHECK(s.sim.store().current_resource_version() == before + 50 + 2000000);
  CHECK(get(port, "/sim/faults/backup").code == 405);
}

TEST_CASE("TLS with a generated CA and a bearer token", "[sim_http]") {
  simulator_options options;
  options.tls = true;
  options.token = "secret-token";
  running_simulator s(options);
  REQUIRE(s.sim.url().rfind("https://127.0.0.1:", 0) == 0);
  REQUIRE(!s.sim.ca_pem().empty());

  net::io_context ioc;
  net::ssl::context ctx(net::ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(s.sim.ca_pem()));
  ctx.set_verify_mode(net::ssl::verify_peer);
  auto https = [&](const std::string& token) {
    beast::ssl_stream<tcp::socket> stream(ioc, ctx);
    stream.next_layer().connect({net::ip::make_address("127.0.0.1"), s.port()});
    set_receive_timeout(stream.next_layer());
    stream.set_verify_callback(net::ssl::host_name_verification("127.0.0.1"));
    stream.handshake(net::ssl::stream_base::client);
    http::write(stream, make_request("GET", "/api/v1/namespaces", bearer(token)));
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    return to_response(res);
  };
  auto authorised = https("secret-token");
  CHECK(authorised.code == 200);
  CHECK(authorised.json().at("kind").as_string() == "NamespaceList");
  auto anonymous = https("");
  CHECK(anonymous.code == 401);
  CHECK(anonymous.json().at("reason").as_string() == "Unauthorized");
}

TEST_CASE("start fails cleanly on a bad listen address", "[sim_http]") {
  simulator_options bad_options;
  bad_options.listen = "not-an-address:1";
  simulator bad(bad_options);
  auto started = bad.start();
  REQUIRE(!started.ok());
  CHECK(started.err().code == errc::invalid_argument);
  simulator_options taken_options;
  running_simulator first;
  taken_options.listen = "127.0.0.1:" + std::to_string(first.port());
  simulator second(taken_options);
  CHECK(!second.start().ok());
}
