#include "protocol/selector.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace kinformer;

namespace {

// An object's labels, as selectors see them: the object lives as long as this does.
struct owned_labels {
  object_ptr object;
  operator string_map_view() const { return object->meta().labels; }
};

owned_labels labels(std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
  boost::json::object map;
  for (const auto& [key, value] : kv)
    map[key] = value;
  boost::json::object metadata{{"name", "x"}, {"labels", std::move(map)}};
  return {object::from_json(boost::json::object{{"metadata", std::move(metadata)}}).value()};
}

label_selector parse_labels(std::string_view text) {
  auto r = label_selector::parse(text);
  INFO(text << " -> " << (r ? std::string() : r.err().describe()));
  REQUIRE(r.ok());
  return *r;
}

std::string label_error(std::string_view text) {
  auto r = label_selector::parse(text);
  INFO(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::invalid_argument);
  return r.err().message;
}

field_selector parse_fields(std::string_view text) {
  auto r = field_selector::parse(text);
  INFO(text << " -> " << (r ? std::string() : r.err().describe()));
  REQUIRE(r.ok());
  return *r;
}

std::string field_error(std::string_view text) {
  auto r = field_selector::parse(text);
  INFO(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::invalid_argument);
  return r.err().message;
}

const char* pod_json = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {"name": "web-1", "namespace": "prod", "labels": {"app": "web"}},
  "spec": {"nodeName": "node-a", "restartPolicy": "Always", "hostNetwork": false},
  "status": {"phase": "Running", "message": "a,b=c\\d"}
})";

} // namespace

TEST_CASE("the empty label selector matches everything") {
  for (auto text : {"", "   ", "\t\n"}) {
    auto sel = parse_labels(text);
    CHECK(sel.empty());
    CHECK(sel.matches(labels({})));
    CHECK(sel.matches(labels({{"a", "b"}})));
    CHECK(sel.to_string().empty());
  }
  CHECK(label_selector().matches(labels({{"x", "y"}})));
}

TEST_CASE("label equality operators") {
  for (auto text : {"app=web", "app==web", " app = web ", "app ==web"}) {
    auto sel = parse_labels(text);
    REQUIRE(sel.requirements().size() == 1);
    CHECK(sel.requirements()[0].op == label_op::equals);
    CHECK(sel.matches(labels({{"app", "web"}})));
    CHECK_FALSE(sel.matches(labels({{"app", "db"}})));
    CHECK_FALSE(sel.matches(labels({})));
    CHECK(sel.to_string() == "app=web");
  }
  auto ne = parse_labels("app!=web");
  CHECK(ne.requirements()[0].op == label_op::not_equals);
  CHECK_FALSE(ne.matches(labels({{"app", "web"}})));
  CHECK(ne.matches(labels({{"app", "db"}})));
  CHECK(ne.matches(labels({}))); // a missing label is "not equal"

  // An empty value is allowed and means the label is present with value "".
  auto empty = parse_labels("app=");
  CHECK(empty.matches(labels({{"app", ""}})));
  CHECK_FALSE(empty.matches(labels({})));
  CHECK(empty.to_string() == "app=");
  auto empty_in_list = parse_labels("app=,tier!=");
  CHECK(empty_in_list.requirements().size() == 2);
}

TEST_CASE("label set operators") {
  auto in = parse_labels("env in (prod, qa)");
  REQUIRE(in.requirements().size() == 1);
  CHECK(in.requirements()[0].op == label_op::in);
  CHECK(in.requirements()[0].values == std::vector<std::string>{"prod", "qa"});
  CHECK(in.matches(labels({{"env", "prod"}})));
  CHECK(in.matches(labels({{"env", "qa"}})));
  CHECK_FALSE(in.matches(labels({{"env", "dev"}})));
  CHECK_FALSE(in.matches(labels({})));
  CHECK(in.to_string() == "env in (prod,qa)");

  auto notin = parse_labels("env notin (qa,prod,qa)");
  CHECK(notin.requirements()[0].op == label_op::not_in);
  CHECK(notin.requirements()[0].values == std::vector<std::string>{"prod", "qa"}); // sorted, unique
  CHECK_FALSE(notin.matches(labels({{"env", "prod"}})));
  CHECK(notin.matches(labels({{"env", "dev"}})));
  CHECK(notin.matches(labels({})));

  // Empty members, as apimachinery allows them: "(,a)" and "(a,)" hold "".
  auto with_empty = parse_labels("env in (,prod)");
  CHECK(with_empty.requirements()[0].values == std::vector<std::string>{"", "prod"});
  CHECK(with_empty.matches(labels({{"env", ""}})));
  CHECK(parse_labels("env in (prod,)").requirements()[0].values ==
        std::vector<std::string>{"", "prod"});

  // "in" and "notin" are plain words where a value stands.
  auto keyword_values = parse_labels("env in (in, notin)");
  CHECK(keyword_values.requirements()[0].values == std::vector<std::string>{"in", "notin"});
  CHECK(parse_labels("a=in").requirements()[0].values == std::vector<std::string>{"in"});
}

TEST_CASE("label existence operators") {
  auto exists = parse_labels("app");
  CHECK(exists.requirements()[0].op == label_op::exists);
  CHECK(exists.matches(labels({{"app", ""}})));
  CHECK_FALSE(exists.matches(labels({{"other", "x"}})));

  auto missing = parse_labels("!app");
  CHECK(missing.requirements()[0].op == label_op::does_not_exist);
  CHECK(missing.matches(labels({{"other", "x"}})));
  CHECK_FALSE(missing.matches(labels({{"app", "x"}})));
  CHECK(parse_labels("! app").to_string() == "!app");
  CHECK(missing.to_string() == "!app");
}

TEST_CASE("label numeric comparisons") {
  auto gt = parse_labels("replicas>3");
  CHECK(gt.requirements()[0].op == label_op::greater_than);
  CHECK(gt.matches(labels({{"replicas", "4"}})));
  CHECK_FALSE(gt.matches(labels({{"replicas", "3"}})));
  CHECK_FALSE(gt.matches(labels({{"replicas", "many"}}))); // not an integer: no match
  CHECK_FALSE(gt.matches(labels({})));
  auto lt = parse_labels("replicas < -2");
  CHECK(lt.matches(labels({{"replicas", "-3"}})));
  CHECK_FALSE(lt.matches(labels({{"replicas", "-2"}})));
  CHECK(lt.to_string() == "replicas<-2");
  CHECK(parse_labels("n>9223372036854775806").matches(labels({{"n", "9223372036854775807"}})));
}

TEST_CASE("several label requirements are ANDed and sorted by key") {
  auto sel = parse_labels("tier=front, app in (web), !legacy,env");
  CHECK(sel.requirements().size() == 4);
  CHECK(sel.matches(labels({{"tier", "front"}, {"app", "web"}, {"env", "x"}})));
  CHECK_FALSE(sel.matches(labels({{"tier", "front"}, {"app", "web"}})));
  CHECK_FALSE(
      sel.matches(labels({{"tier", "front"}, {"app", "web"}, {"env", "x"}, {"legacy", ""}})));
  CHECK(sel.to_string() == "app in (web),env,!legacy,tier=front");
}

TEST_CASE("label keys may carry a DNS subdomain prefix") {
  auto sel = parse_labels("app.kubernetes.io/name=web,k8s.io/x_Y.z-1");
  CHECK(sel.matches(labels({{"app.kubernetes.io/name", "web"}, {"k8s.io/x_Y.z-1", ""}})));
  CHECK(parse_labels(std::string(63, 'a') + "=" + std::string(63, 'b')).requirements().size() == 1);
  std::string long_prefix;
  for (int i = 0; i < 4; ++i)
    long_prefix += std::string(60, 'p') + ".";
  long_prefix += "io"; // 246 characters
  CHECK(parse_labels(long_prefix + "/name").requirements().size() == 1);
}

TEST_CASE("label selector errors name the position and what was expected") {
  CHECK(label_error("a in (b") ==
        "label selector \"a in (b\": expected ',' or ')' at position 7, found end of string");
  CHECK(label_error("a in") ==
        "label selector \"a in\": expected '(' at position 4, found end of string");
  CHECK(label_error("a in ()") ==
        "label selector \"a in ()\": expected at least one value at position 6, found ')'");
  CHECK(label_error("in (x)") ==
        "label selector \"in (x)\": expected a label key at position 0, found 'in'");
  CHECK(label_error("a=b=c") ==
        "label selector \"a=b=c\": expected ',' or end of string at position 3, found '='");
  CHECK(label_error("!") ==
        "label selector \"!\": expected a label key at position 1, found end of string");
  CHECK(label_error("a>b") ==
        "label selector \"a>b\": invalid value 'b' at position 2: '>' and '<' need an integer");

  // Empty keys, stray separators and operators.
  CHECK(label_error("=b").find("expected '!' or a label key at position 0, found '='") !=
        std::string::npos);
  CHECK(label_error(",a").find("at position 0") != std::string::npos);
  CHECK(label_error("a,").find("after ','") != std::string::npos);
  CHECK(label_error("a,,b").find("position 2") != std::string::npos);
  CHECK(label_error("a b").find("expected one of '=', '==', '!=', 'in', 'notin', '>', '<'") !=
        std::string::npos);
  CHECK(label_error("a!b").find("found '!'") != std::string::npos);
  CHECK(label_error("!a=b").find("expected ',' or end of string") != std::string::npos);
  CHECK(label_error("a in b").find("expected '('") != std::string::npos);
  CHECK(label_error("a in (b c)").find("expected ',' or ')' at position 8") != std::string::npos);
  CHECK(label_error("a in (b))").find("position 8") != std::string::npos);
  CHECK(label_error("a notin (=)").find("expected ',' or ')'") != std::string::npos);
  CHECK(label_error("a=(b)").find("expected a label value") != std::string::npos);
  CHECK(label_error("a>=3").find("expected a label value") != std::string::npos);
  CHECK(label_error("a>").find("need an integer") != std::string::npos);
  CHECK(label_error("a<1.5").find("need an integer") != std::string::npos);
  CHECK(label_error("a>99999999999999999999").find("need an integer") != std::string::npos);
  CHECK(label_error("(a)").find("position 0") != std::string::npos);
}

TEST_CASE("label keys and values are validated") {
  CHECK(label_error("-a=b").find("invalid label key '-a' at position 0") != std::string::npos);
  CHECK(label_error("a-=b").find("starting and ending with an alphanumeric") != std::string::npos);
  CHECK(label_error("a$b").find("invalid label key") != std::string::npos);
  CHECK(label_error(std::string(64, 'a')).find("at most 63 characters") != std::string::npos);
  CHECK(label_error("/a").find("prefix before '/' must not be empty") != std::string::npos);
  CHECK(label_error("x/").find("name part must not be empty") != std::string::npos);
  CHECK(label_error("Upper.io/a").find("DNS subdomain") != std::string::npos);
  CHECK(label_error("a..b/c").find("DNS subdomain") != std::string::npos);
  CHECK(label_error(std::string(254, 'a') + "/b").find("DNS subdomain") != std::string::npos);
  CHECK(label_error("a/b/c").find("at most one '/'") != std::string::npos);
  CHECK(label_error("ok, x=in-valid-").find("invalid label value 'in-valid-' at position 6") !=
        std::string::npos);
  CHECK(label_error("a=" + std::string(64, 'v')).find("at most 63 characters") !=
        std::string::npos);
  CHECK(label_error("a in (ok,b@d)").find("invalid label value 'b@d' at position 9") !=
        std::string::npos);
  CHECK(label_error("a=é").find("invalid label value") != std::string::npos);
}

TEST_CASE("label selectors round-trip through their canonical form") {
  for (auto text : {"a", "!a", "a=b", "a==b", "a!=b", "a>1", "a<-1", "a in (x,y)", "a notin (y,x)",
                    "a=", "a in (,x)", "a in (,)", "b=2, a=1, c in (z, y), !d, e",
                    "example.com/key=v.1_x-Z", "a=in", "x,x,x=1,x=1"}) {
    auto sel = parse_labels(text);
    auto again = label_selector::parse(sel.to_string());
    INFO(text << " -> " << sel.to_string());
    REQUIRE(again.ok());
    CHECK(*again == sel);
    CHECK(again->to_string() == sel.to_string());
  }
  CHECK(parse_labels("x,x,x=1,x=1").to_string() == "x=1,x"); // duplicates collapse
}

TEST_CASE("label selectors combine and build from labels") {
  auto sel = label_selector::from_labels({{"tier", "front"}, {"app", "web"}});
  CHECK(sel.to_string() == "app=web,tier=front");
  CHECK(sel.matches(labels({{"app", "web"}, {"tier", "front"}, {"x", "y"}})));
  CHECK_FALSE(sel.matches(labels({{"app", "web"}})));
  auto both = sel & parse_labels("!legacy,app=web");
  CHECK(both.to_string() == "app=web,!legacy,tier=front");
  CHECK((label_selector() & sel) == sel);
}

TEST_CASE("label selectors match objects by their metadata labels") {
  auto pod = object::parse(pod_json);
  REQUIRE(pod.ok());
  CHECK(parse_labels("app=web").matches(**pod));
  CHECK_FALSE(parse_labels("app=db").matches(**pod));
  CHECK(parse_labels("!tier").matches(**pod));
}

TEST_CASE("field selectors parse =, == and !=") {
  auto sel = parse_fields("status.phase=Running,spec.nodeName==node-a,metadata.name!=web-2");
  REQUIRE(sel.requirements().size() == 3);
  CHECK(sel.to_string() == "metadata.name!=web-2,spec.nodeName=node-a,status.phase=Running");
  CHECK(sel.required_value("status.phase") == "Running");
  CHECK(sel.required_value("spec.nodeName") == "node-a");
  CHECK_FALSE(sel.required_value("metadata.name").has_value()); // != gives no index value
  CHECK_FALSE(sel.required_value("missing").has_value());

  CHECK(parse_fields("").empty());
  CHECK(parse_fields(" , ,").empty()); // empty terms are skipped, as apimachinery does
  CHECK(parse_fields(" metadata.name = x").requirements()[0].field == "metadata.name");
  CHECK(parse_fields(" metadata.name = x").requirements()[0].value == " x"); // values are verbatim
  CHECK(parse_fields("a=").requirements()[0].value.empty());
  CHECK(parse_fields("a!=").requirements()[0].op == field_op::not_equals);
}

TEST_CASE("field selector values use backslash escapes") {
  auto sel = parse_fields(R"(status.message=a\,b\=c\\d)");
  REQUIRE(sel.requirements().size() == 1);
  CHECK(sel.requirements()[0].value == R"(a,b=c\d)");
  CHECK(sel.to_string() == R"(status.message=a\,b\=c\\d)");
  // An escaped comma does not split terms; an escaped '=' does not split a term.
  auto two = parse_fields(R"(a=x\,y,b=z)");
  CHECK(two.requirements().size() == 2);
  CHECK(two.required_value("a") == "x,y");
  CHECK(parse_fields(R"(a=\=)").required_value("a") == "=");
  CHECK(parse_fields("a=é€").required_value("a") == "é€");
}

TEST_CASE("field selector errors") {
  CHECK(
      field_error(R"(a=b\x)") ==
      R"(field selector "a=b\x": invalid escape sequence '\x' (only \\, \, and \= are allowed) at position 3)");
  CHECK(field_error(R"(a=b\)").find("may not end with a single '\\' at position 3") !=
        std::string::npos);
  CHECK(field_error("a=b=c").find("unescaped '=' in a value") != std::string::npos);
  CHECK(field_error("a===b").find("unescaped '='") != std::string::npos);
  CHECK(field_error("abc") == "field selector \"abc\": expected '=', '==' or '!=' in term 'abc' at "
                              "position 3");
  CHECK(field_error("a=1,bc").find("at position 6") != std::string::npos);
  CHECK(field_error("=b").find("expected a field name") != std::string::npos);
  CHECK(field_error(" !=b").find("expected a field name") != std::string::npos);
  CHECK(field_error("a b=c").find("invalid character ' ' in field name 'a b' at position 1") !=
        std::string::npos);
  CHECK(field_error("a(b)=c").find("invalid character '('") != std::string::npos);
}

TEST_CASE("field selectors match object fields, a missing field is empty") {
  auto pod = object::parse(pod_json);
  REQUIRE(pod.ok());
  const object& p = **pod;
  CHECK(parse_fields("status.phase=Running").matches(p));
  CHECK_FALSE(parse_fields("status.phase=Pending").matches(p));
  CHECK(parse_fields("status.phase!=Pending").matches(p));
  CHECK(parse_fields("metadata.namespace=prod,metadata.name=web-1").matches(p));
  CHECK_FALSE(parse_fields("metadata.namespace=prod,metadata.name=web-2").matches(p));
  CHECK(parse_fields("spec.hostNetwork=false").matches(p)); // booleans compare as JSON text
  CHECK(parse_fields(R"(status.message=a\,b\=c\\d)").matches(p));
  CHECK(parse_fields("spec.missing=").matches(p));
  CHECK_FALSE(parse_fields("spec.missing!=").matches(p));
  CHECK_FALSE(parse_fields("spec.missing=x").matches(p));
  CHECK(parse_fields("spec.missing!=x").matches(p));
  CHECK(field_selector().matches(p));
}

TEST_CASE("field selectors round-trip and combine") {
  for (auto text : {"a=b", "a!=b", R"(a=\,\=\\)", "b=1,a=2,a!=3", "a=", "x.y.z==w"}) {
    auto sel = parse_fields(text);
    auto again = field_selector::parse(sel.to_string());
    INFO(text << " -> " << sel.to_string());
    REQUIRE(again.ok());
    CHECK(*again == sel);
  }
  auto both = parse_fields("metadata.namespace!=a") & parse_fields("metadata.namespace!=b");
  CHECK(both.to_string() == "metadata.namespace!=a,metadata.namespace!=b");
  CHECK((both & both) == both);
}

TEST_CASE("random selector text never crashes, and whatever parses round-trips") {
  // Deterministic: a fixed seed over an alphabet dense in the grammar's special characters.
  std::mt19937 rng(20240611);
  const std::string_view alphabet = "ab1-_./=!<>(), \\\tinot";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> length(0, 24);
  int label_accepted = 0;
  int field_accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int n = length(rng); n > 0; --n)
      text.push_back(alphabet[pick(rng)]);
    INFO(text);
    if (auto sel = label_selector::parse(text)) {
      ++label_accepted;
      auto again = label_selector::parse(sel->to_string());
      REQUIRE(again.ok());
      CHECK(*again == *sel);
    } else {
      CHECK(sel.err().code == errc::invalid_argument);
    }
    if (auto sel = field_selector::parse(text)) {
      ++field_accepted;
      auto again = field_selector::parse(sel->to_string());
      REQUIRE(again.ok());
      CHECK(*again == *sel);
    } else {
      CHECK(sel.err().code == errc::invalid_argument);
    }
  }
  // The property was exercised on real selectors, not only on rejected noise.
  CHECK(label_accepted > 100);
  CHECK(field_accepted > 100);
}
