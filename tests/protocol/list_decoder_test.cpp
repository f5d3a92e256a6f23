#include "protocol/list_decoder.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace kinformer;

namespace {

// A PodList of `n` items whose strings carry quotes, backslashes, brackets and escapes, so that
// any cut through the body can land inside a string, an escape or a nested value.
std::string tricky_list(int n) {
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"77",)"
                     R"("continue":"c"},"items":[)";
  for (int i = 0; i < n; ++i) {
    if (i)
      body += i % 3 ? "," : " ,\n ";
    body += R"({"metadata":{"name":"p)" + std::to_string(i) +
            R"(","namespace":"ns","labels":{"k":"v\"]}\\"},"annotations":{"a":"\u00e9[{"}},)"
            R"("spec":{"items":[1,[2,{"x":"}"}]],"s":"\\\\\""}})";
  }
  return body + "]}";
}

struct decoded {
  std::vector<object_ptr> items;
  result<list_page> page = make_error(errc::invalid_argument, "not finished");
};

// Feeds `body` in pieces of the given sizes (the last size repeats). Each piece lies in one
// read buffer, overwritten after feed() returns as a reader's next read would: the decoder keeps
// what it needs of a piece, never a view of it.
decoded feed_in_pieces(std::string_view body, const std::vector<std::size_t>& sizes,
                       std::size_t max_item = std::size_t{64} << 20) {
  list_decoder decoder({}, max_item);
  decoded out;
  std::string read_buffer;
  std::size_t at = 0, piece = 0;
  while (at < body.size()) {
    const std::size_t n = std::min(sizes[std::min(piece++, sizes.size() - 1)], body.size() - at);
    read_buffer.assign(body.substr(at, n));
    if (auto fed = decoder.feed(read_buffer, out.items); !fed) {
      out.page = std::move(fed).err();
      return out;
    }
    read_buffer.assign(read_buffer.size(), '#');
    at += n;
  }
  out.page = decoder.finish(out.items);
  return out;
}

} // namespace

TEST_CASE("a List fed in pieces of any size decodes as the whole body does") {
  const std::string body = tricky_list(7);
  const auto whole = boost::json::parse(body).at("items").as_array();
  for (std::size_t size : {1, 2, 3, 5, 7, 13, 64, 100, 1000, 100000}) {
    INFO("pieces of " << size);
    auto out = feed_in_pieces(body, {size});
    REQUIRE(out.page.ok());
    CHECK(out.page->resource_version == "77");
    CHECK(out.page->continue_token == "c");
    CHECK(out.page->items.empty()); // they went out as they were decoded
    REQUIRE(out.items.size() == whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) {
      auto expected = whole[i];
      expected.as_object()["kind"] = "Pod";
      expected.as_object()["apiVersion"] = "v1";
      CHECK(out.items[i]->tree() == expected);
      CHECK(out.items[i]->meta().label("k") == "v\"]}\\");
    }
  }
}

TEST_CASE("random cuts give the same items") {
  const std::string body = tricky_list(20);
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::size_t> sizes;
    for (int i = 0; i < 64; ++i)
      sizes.push_back(std::uniform_int_distribution<std::size_t>(1, 300)(rng));
    auto out = feed_in_pieces(body, sizes);
    REQUIRE(out.page.ok());
    REQUIRE(out.items.size() == 20);
    CHECK(out.items[19]->meta().name == "p19");
  }
}

TEST_CASE("items are decoded as soon as their last byte arrives") {
  const std::string body = tricky_list(3);
  list_decoder decoder;
  std::vector<object_ptr> items;
  const std::size_t second_item = body.find(R"({"metadata":{"name":"p1")");
  REQUIRE(decoder.feed(std::string_view(body).substr(0, second_item), items).ok());
  CHECK(items.size() == 1); // p0 is complete; the body is not
  REQUIRE(decoder.feed(std::string_view(body).substr(second_item), items).ok());
  CHECK(items.size() == 3);
  CHECK(decoder.finish(items).ok());
}

TEST_CASE("a broken List fails at once, and stays failed") {
  std::vector<object_ptr> items;
  list_decoder bad_item;
  auto fed = bad_item.feed(R"({"kind":"PodList","items":[{"metadata":{"name":1}}]})", items);
  REQUIRE_FALSE(fed.ok());
  CHECK(fed.err().code == errc::invalid_object);
  CHECK(fed.err().message == "List items[0]: metadata.name must be a string, found a number");
  CHECK_FALSE(bad_item.feed("more", items).ok());
  CHECK_FALSE(bad_item.finish(items).ok());

  list_decoder not_object;
  CHECK(not_object.feed(R"({"items":[{},3]})", items).err().message ==
        "List items[1] must be an object, found a number");
  for (const auto& [body, message] : std::vector<std::pair<std::string, std::string>>{
           {"[1]", "a List must be a JSON object, found an array"},
           {"nul", "a List must be a JSON object, found null"},
           {R"({"items":["x"]})", "List items[0] must be an object, found a string"},
           {R"({"items":[true]})", "List items[0] must be an object, found a boolean"},
           {R"({"items":[[]]})", "List items[0] must be an object, found an array"},
           {R"({"items":[-1]})", "List items[0] must be an object, found a number"},
           {R"({"items":[x]})", "List items[0] must be an object, found not JSON"}}) {
    list_decoder decoder;
    INFO(body);
    CHECK(decoder.feed(body, items).err().message == message);
  }

  // A body cut anywhere is an error at finish(), never a partial page.
  const std::string body = tricky_list(3);
  for (std::size_t n = 0; n < body.size(); ++n) {
    list_decoder cut;
    std::vector<object_ptr> some;
    auto r = cut.feed(std::string_view(body).substr(0, n), some);
    if (r.ok()) {
      auto page = cut.finish(some);
      INFO(n);
      CHECK_FALSE(page.ok());
    }
  }
}

TEST_CASE("an item over the limit is too_large, wherever the body is cut") {
  const std::string body = tricky_list(2);
  for (std::size_t size : {1, 50, 100000}) {
    auto out = feed_in_pieces(body, {size}, 100);
    REQUIRE_FALSE(out.page.ok());
    CHECK(out.page.err().code == errc::too_large);
  }
  // The limit is per item: a body many times larger passes.
  auto out = feed_in_pieces(tricky_list(50), {4096}, 400);
  REQUIRE(out.page.ok());
  CHECK(out.items.size() == 50);
}

TEST_CASE("a List that names its kind after its items still types them") {
  list_decoder decoder;
  std::vector<object_ptr> items;
  REQUIRE(decoder
              .feed(R"({"items":[{"metadata":{"name":"a"}}],"kind":"PodList","apiVersion":"v1"})",
                    items)
              .ok());
  CHECK_FALSE(decoder.types_known());
  REQUIRE(decoder.finish(items).ok());
  REQUIRE(items.size() == 1);
  CHECK(items[0]->kind() == "Pod");
  CHECK(items[0]->api_version() == "v1");
}
