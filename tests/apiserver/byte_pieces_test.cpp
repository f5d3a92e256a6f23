// A message in pieces: what it holds, in order, with its size; empty pieces are left out (an
// empty HTTP chunk would end a stream).

#include "app/apiserver/byte_pieces.hpp"

#include <catch2/catch.hpp>

using namespace kinformer::apiserver;

TEST_CASE("byte_pieces keep their order and size, leave out empty pieces, and append whole") {
  byte_pieces a;
  CHECK(a.empty());
  a.append_literal("one ");
  a.append_literal("");
  a.append(std::string());
  auto shared = std::make_shared<const std::string>("two ");
  a.append_shared(shared, *shared);
  CHECK(a.pieces().size() == 2);
  CHECK(a.size() == 8);

  byte_pieces b(std::string("three"));
  a.append(std::move(b));
  CHECK(b.empty());
  CHECK(b.pieces().empty());
  CHECK(a.joined() == "one two three");
  CHECK(a.size() == 13);

  byte_pieces c; // appended to when empty, it takes the other's pieces
  c.append(std::move(a));
  CHECK(c.joined() == "one two three");
  CHECK(a.empty());

  auto released = c.release();
  CHECK(released.size() == 3);
  CHECK(released[1].bytes.data() == shared->data()); // shared, not copied
  CHECK(c.empty());
  CHECK(c.joined().empty());

  CHECK(byte_pieces(std::shared_ptr<const std::string>()).empty());
  CHECK(byte_pieces(std::make_shared<const std::string>("x")).joined() == "x");
}
