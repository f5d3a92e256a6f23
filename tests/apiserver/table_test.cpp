// The default Table: columns, rows, the object each row carries, list metadata.

#include "app/apiserver/table.hpp"
#include "app/apiserver/table_printer.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace kinformer;
using namespace kinformer::apiserver;
namespace json = boost::json;

namespace {

object_ptr pod(const std::string& name, const std::string& created) {
  auto obj = object::parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
                           R"(","namespace":"ns-1","resourceVersion":"7","creationTimestamp":")" +
                           created + R"(","labels":{"app":"a"}},"spec":{"nodeName":"n1"}})");
  REQUIRE(obj.ok());
  return *obj;
}

} // namespace

TEST_CASE("a Table has Name and Created At, and a row per object with its metadata") {
  std::vector<object_ptr> pods{pod("a", "2026-01-02T03:04:05Z"), pod("b\\\"q", "")};
  auto table = json::parse(table_json(pods, include_object::metadata, {"42", "tok", 3}));
  CHECK(table.at("kind") == "Table");
  CHECK(table.at("apiVersion") == "meta.k8s.io/v1");
  CHECK(table.at("metadata").at("resourceVersion") == "42");
  CHECK(table.at("metadata").at("continue") == "tok");
  CHECK(table.at("metadata").at("remainingItemCount") == 3);
  const auto& columns = table.at("columnDefinitions").as_array();
  REQUIRE(columns.size() == 2);
  CHECK(columns[0].at("name") == "Name");
  CHECK(columns[1].at("name") == "Created At");
  const auto& rows = table.at("rows").as_array();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("cells") == json::array{"a", "2026-01-02T03:04:05Z"});
  CHECK(rows[1].at("cells").at(0) == "b\"q"); // escaped on the way out
  const auto& object = rows[0].at("object");
  CHECK(object.at("kind") == "PartialObjectMetadata");
  CHECK(object.at("metadata").at("namespace") == "ns-1");
  CHECK_FALSE(object.as_object().contains("spec"));
}

TEST_CASE("includeObject chooses what a row carries, a watch's later events have no columns") {
  std::vector<object_ptr> one{pod("a", "2026-01-02T03:04:05Z")};
  auto full = json::parse(table_json(one, include_object::object, {"7", {}, {}}));
  CHECK(full.at("rows").at(0).at("object").at("spec").at("nodeName") == "n1");
  CHECK_FALSE(full.at("metadata").as_object().contains("continue"));
  auto none = json::parse(table_json(one, include_object::none, {"7", {}, {}}, false));
  CHECK_FALSE(none.at("rows").at(0).as_object().contains("object"));
  CHECK(none.at("columnDefinitions").is_null());

  CHECK(parse_include_object("") == include_object::metadata);
  CHECK(parse_include_object("Metadata") == include_object::metadata);
  CHECK(parse_include_object("None") == include_object::none);
  CHECK(parse_include_object("Object") == include_object::object);
  CHECK_FALSE(parse_include_object("object"));
}

namespace {

object_ptr parse(const std::string& text) {
  auto obj = object::parse(text);
  REQUIRE(obj.ok());
  return *obj;
}

const auto now = std::chrono::system_clock::from_time_t(1767323045); // 2026-01-02T03:04:05Z

json::array cells_of(const table_printer& printer, const object_ptr& obj) {
  std::string out = "[";
  printer.cells(*obj, now, out);
  out += "]";
  return json::parse(out).as_array();
}

} // namespace

TEST_CASE("ages read as the API server prints them") {
  CHECK(human_age("2026-01-02T03:04:05Z", now) == "0s");
  CHECK(human_age("2026-01-02T03:02:06Z", now) == "119s");
  CHECK(human_age("2026-01-02T03:00:05Z", now) == "4m");
  CHECK(human_age("2026-01-02T02:59:45Z", now) == "4m20s");
  CHECK(human_age("2026-01-02T01:04:05Z", now) == "120m");
  CHECK(human_age("2026-01-01T22:34:05Z", now) == "4h30m");
  CHECK(human_age("2026-01-01T03:04:05Z", now) == "24h");
  CHECK(human_age("2025-12-30T00:04:05Z", now) == "3d3h");
  CHECK(human_age("2025-11-02T03:04:05Z", now) == "61d");
  CHECK(human_age("2023-01-02T03:04:05Z", now) == "3y1d"); // 1,096 days: 2024 had 366
  CHECK(human_age("2016-01-02T03:04:05Z", now) == "10y");
  CHECK(human_age("2026-01-02T03:04:05.123456+01:00", now) == "60m");
  CHECK(human_age("2026-01-02T03:05:05Z", now) == "<invalid>");
  CHECK(human_age("", now) == "<unknown>");
  CHECK(human_age("yesterday", now) == "<unknown>");
}

TEST_CASE("a pod's row: ready containers, the status kubectl shows, restarts and wide cells") {
  const table_printer* pods = printer_for("", "Pod");
  REQUIRE(pods);
  CHECK(json::parse(pods->columns).as_array().size() == 9);
  auto running = parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web",)"
                       R"("creationTimestamp":"2026-01-02T02:04:05Z"},"spec":{"nodeName":"n1",)"
                       R"("containers":[{"name":"a"},{"name":"b"}]},"status":{"phase":"Running",)"
                       R"("podIP":"10.0.0.7","containerStatuses":[)"
                       R"({"name":"a","ready":true,"restartCount":0,"state":{"running":{}}},)"
                       R"({"name":"b","ready":false,"restartCount":0,"state":{"running":{}}}]}})");
  CHECK(cells_of(*pods, running) ==
        json::array{"web", "1/2", "Running", "0", "60m", "10.0.0.7", "n1", "<none>", "<none>"});

  auto crashing =
      parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"bad",)"
            R"("creationTimestamp":"2026-01-02T03:00:05Z"},"spec":{"containers":[{"name":"a"}],)"
            R"("readinessGates":[{"conditionType":"x/ok"}]},"status":{"phase":"Running",)"
            R"("conditions":[{"type":"x/ok","status":"True"}],"containerStatuses":[{"name":"a",)"
            R"("ready":false,"restartCount":5,"state":{"waiting":{"reason":"CrashLoopBackOff"}},)"
            R"("lastState":{"terminated":{"exitCode":1,"finishedAt":"2026-01-02T03:03:05Z"}}}]}})");
  CHECK(cells_of(*pods, crashing) == json::array{"bad", "0/1", "CrashLoopBackOff", "5 (60s ago)",
                                                 "4m", "<none>", "<none>", "<none>", "1/1"});

  auto initializing = parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"i"},)"
                            R"("spec":{"initContainers":[{"name":"x"},{"name":"y"}],)"
                            R"("containers":[{"name":"a"}]},"status":{"phase":"Pending",)"
                            R"("initContainerStatuses":[{"name":"x","restartCount":0,)"
                            R"("state":{"terminated":{"exitCode":0}}},{"name":"y",)"
                            R"("restartCount":0,"state":{"running":{}}}]}})");
  CHECK(cells_of(*pods, initializing).at(2) == "Init:1/2");

  // A native sidecar (an init container that restarts Always) counts among the containers.
  auto sidecar = parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"s"},"spec":)"
                       R"({"initContainers":[{"name":"proxy","restartPolicy":"Always"}],)"
                       R"("containers":[{"name":"a"}]},"status":{"phase":"Running","conditions":)"
                       R"([{"type":"Initialized","status":"True"}],"initContainerStatuses":[)"
                       R"({"name":"proxy","started":true,"ready":true,"restartCount":2,)"
                       R"("state":{"running":{}}}],"containerStatuses":[{"name":"a",)"
                       R"("ready":true,"restartCount":1,"state":{"running":{}}}]}})");
  auto sidecar_cells = cells_of(*pods, sidecar);
  CHECK(sidecar_cells.at(1) == "2/2");
  CHECK(sidecar_cells.at(2) == "Running");
  CHECK(sidecar_cells.at(3) == "3");

  auto gated = parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"g"},"spec":)"
                     R"({"containers":[{"name":"a"}]},"status":{"phase":"Pending","conditions":)"
                     R"([{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}})");
  CHECK(cells_of(*pods, gated).at(2) == "SchedulingGated");

  auto terminating = parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"t",)"
                           R"("deletionTimestamp":"2026-01-02T03:04:00Z"},"spec":{"containers":)"
                           R"([{"name":"a"}]},"status":{"phase":"Running"}})");
  CHECK(cells_of(*pods, terminating).at(2) == "Terminating");
}

TEST_CASE("deployments, services, configmaps, secrets, namespaces and nodes have their columns") {
  CHECK_FALSE(printer_for("", "Widget"));
  CHECK_FALSE(printer_for("example.com", "Pod"));
  CHECK_FALSE(printer_for("apps", "Pod"));

  auto deployment =
      parse(R"({"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web",)"
            R"("creationTimestamp":"2026-01-01T03:04:05Z"},"spec":{"replicas":3,"selector":)"
            R"({"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In",)"
            R"("values":["b","a"]}]},"template":{"spec":{"containers":[{"name":"a","image":"i:1"},)"
            R"({"name":"b","image":"j:2"}]}}},"status":{"readyReplicas":2,"updatedReplicas":3,)"
            R"("availableReplicas":2}})");
  CHECK(cells_of(*printer_for("apps", "Deployment"), deployment) ==
        json::array{"web", "2/3", 3, 2, "24h", "a,b", "i:1,j:2", "app=web,tier in (a,b)"});

  // Requirements sorted by key, as LabelSelectorAsSelector prints them; none is "".
  auto keyed = parse(R"({"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"k"},)"
                     R"("spec":{"selector":{"matchLabels":{"app.kubernetes.io/name":"x",)"
                     R"("app":"web"},"matchExpressions":[{"key":"zone","operator":)"
                     R"("DoesNotExist"}]}}})");
  CHECK(cells_of(*printer_for("apps", "Deployment"), keyed).at(7) ==
        "app=web,app.kubernetes.io/name=x,!zone");
  auto unselective = parse(R"({"kind":"Deployment","apiVersion":"apps/v1","metadata":)"
                           R"({"name":"u"},"spec":{}})");
  CHECK(cells_of(*printer_for("apps", "Deployment"), unselective).at(7) == "");

  auto service = parse(R"({"kind":"Service","apiVersion":"v1","metadata":{"name":"s"},)"
                       R"("spec":{"type":"NodePort","clusterIP":"10.96.0.9","ports":[)"
                       R"({"port":80,"nodePort":30080,"protocol":"TCP"},{"port":53,)"
                       R"("protocol":"UDP"}],"selector":{"b":"2","a":"1"}}})");
  CHECK(cells_of(*printer_for("", "Service"), service) ==
        json::array{"s", "NodePort", "10.96.0.9", "<none>", "80:30080/TCP,53/UDP", "<unknown>",
                    "a=1,b=2"});
  auto balancer = parse(R"({"kind":"Service","apiVersion":"v1","metadata":{"name":"lb"},)"
                        R"("spec":{"type":"LoadBalancer"}})");
  CHECK(cells_of(*printer_for("", "Service"), balancer).at(3) == "<pending>");

  auto configmap = parse(R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"},)"
                         R"("data":{"a":"1","b":"2"},"binaryData":{"c":""}})");
  CHECK(cells_of(*printer_for("", "ConfigMap"), configmap) == json::array{"c", 3, "<unknown>"});
  auto secret = parse(R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},)"
                      R"("type":"Opaque","data":{"k":"dg=="}})");
  CHECK(cells_of(*printer_for("", "Secret"), secret) == json::array{"s", "Opaque", 1, "<unknown>"});
  auto ns = parse(R"({"kind":"Namespace","apiVersion":"v1","metadata":{"name":"n"},)"
                  R"("status":{"phase":"Active"}})");
  CHECK(cells_of(*printer_for("", "Namespace"), ns) == json::array{"n", "Active", "<unknown>"});
  auto node = parse(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","labels":)"
                    R"({"node-role.kubernetes.io/control-plane":""}},"spec":{"unschedulable":)"
                    R"(true},"status":{"conditions":[{"type":"Ready","status":"True"}],)"
                    R"("addresses":[{"type":"InternalIP","address":"10.0.0.1"}],"nodeInfo":)"
                    R"({"kubeletVersion":"v1.31.0","osImage":"Debian"}}})");
  CHECK(cells_of(*printer_for("", "Node"), node) ==
        json::array{"n1", "Ready,SchedulingDisabled", "control-plane", "<unknown>", "v1.31.0",
                    "10.0.0.1", "<none>", "Debian", "<unknown>", "<unknown>"});
}

TEST_CASE("a Table by a printer has its columns and its cells") {
  std::vector<object_ptr> pods{pod("a", "2026-01-02T03:04:05Z")};
  auto table = json::parse(
      table_json(pods, include_object::none, {"7", {}, {}}, true, printer_for("", "Pod")));
  CHECK(table.at("columnDefinitions").as_array().size() == 9);
  CHECK(table.at("rows").at(0).at("cells").at(0) == "a");
  CHECK(table.at("rows").at(0).at("cells").at(6) == "n1");
}
