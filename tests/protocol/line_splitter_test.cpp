#include "protocol/decode.hpp"
#include "protocol/line_splitter.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace kinformer;

namespace {

using lines = std::vector<std::string>;

// Feeds `stream` cut at the given offsets and returns every line, requiring no errors.
lines split_at(std::string_view stream, const std::vector<std::size_t>& cuts,
               std::size_t limit = line_splitter::default_max_line_bytes) {
  line_splitter splitter(limit);
  lines out;
  std::size_t from = 0;
  for (std::size_t cut : cuts) {
    REQUIRE(splitter.feed(stream.substr(from, cut - from), out).ok());
    from = cut;
  }
  REQUIRE(splitter.feed(stream.substr(from), out).ok());
  REQUIRE(splitter.finish().ok());
  return out;
}

const std::string sample = "{\"a\":1}\n\nsecond line\r\n\r\nx\n{\"b\":\"c\\nd\"}\n";
const lines sample_lines = {"{\"a\":1}", "", "second line", "", "x", "{\"b\":\"c\\nd\"}"};

} // namespace

TEST_CASE("complete lines come out without their newline") {
  CHECK(split_at("a\nbc\n", {}) == lines{"a", "bc"});
  CHECK(split_at("", {}).empty());
  CHECK(split_at("\n", {}) == lines{""});
  CHECK(split_at("\n\n\n", {}) == lines{"", "", ""});
  CHECK(split_at("\r\n", {}) == lines{""});
  CHECK(split_at("a\r\nb\n", {}) == lines{"a", "b"});
  CHECK(split_at("a\rb\n", {}) == lines{"a\rb"}); // only a CR right before '\n' is dropped
  CHECK(split_at("a\r\r\n", {}) == lines{"a\r"});
  CHECK(split_at(sample, {}) == sample_lines);
}

TEST_CASE("every chunk boundary gives the same lines") {
  for (std::size_t cut = 0; cut <= sample.size(); ++cut) {
    INFO("cut at " << cut);
    CHECK(split_at(sample, {cut}) == sample_lines);
  }
  for (std::size_t first = 0; first <= sample.size(); ++first)
    for (std::size_t second = first; second <= sample.size(); ++second) {
      INFO("cuts at " << first << " and " << second);
      CHECK(split_at(sample, {first, second}) == sample_lines);
    }
  std::vector<std::size_t> every_byte;
  for (std::size_t i = 1; i < sample.size(); ++i)
    every_byte.push_back(i);
  CHECK(split_at(sample, every_byte) == sample_lines);
}

TEST_CASE("lines inside one chunk are views of it, straddling lines are gathered") {
  line_splitter splitter;
  const std::string chunk = "one\ntwo\nthr";
  std::vector<bool> inside;
  auto record = [&](std::string_view line) {
    inside.push_back(line.data() >= chunk.data() && line.data() < chunk.data() + chunk.size());
  };
  REQUIRE(splitter.feed(chunk, record).ok());
  CHECK(inside == std::vector<bool>{true, true});
  CHECK(splitter.buffered() == 3);

  lines seen;
  REQUIRE(splitter.feed("ee\n", [&](std::string_view line) { seen.emplace_back(line); }).ok());
  CHECK(seen == lines{"three"});
  CHECK(splitter.buffered() == 0);
}

TEST_CASE("a line at the limit passes, over it is too_large, reported once") {
  CHECK(split_at("12345678\n", {}, 8) == lines{"12345678"});
  CHECK(split_at("1234567\r\n", {3}, 8) == lines{"1234567"}); // the CR counts towards the limit

  line_splitter splitter(8);
  lines out;
  auto r = splitter.feed("ok\n123456789\nnext\n", out);
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::too_large);
  CHECK(r.err().message == "skipped 1 line(s) longer than the limit of 8 bytes");
  CHECK(out == lines{"ok", "next"}); // the lines around the long one still arrive

  // A long line spread over chunks is reported by the chunk that crosses the limit, only.
  out.clear();
  CHECK(splitter.feed("a\n12345", out).ok());
  CHECK(splitter.feed("6789", out).err().code == errc::too_large);
  CHECK(splitter.feed("more bytes of the same line", out).ok());
  CHECK(splitter.buffered() == 0);
  CHECK(splitter.feed("end\nafter\n", out).ok());
  CHECK(out == lines{"a", "after"});

  auto two = splitter.feed("123456789\nx\n123456789\n", out);
  CHECK(two.err().message == "skipped 2 line(s) longer than the limit of 8 bytes");
  CHECK(out == lines{"a", "after", "x"});
}

TEST_CASE("the buffer never grows past the limit and is reused") {
  const std::size_t limit = 1000;
  line_splitter splitter(limit);
  const std::string long_line(limit, 'x');
  lines out;
  for (int round = 0; round < 3; ++round) {
    for (char c : long_line) // one byte at a time: the worst case for growth
      REQUIRE(splitter.feed(std::string_view(&c, 1), out).ok());
    CHECK(splitter.capacity() <= limit);
    CHECK(splitter.buffered() == limit);
    REQUIRE(splitter.feed("\n", out).ok());
    CHECK(splitter.capacity() >= limit); // kept for the next straddling line
  }
  CHECK(out == lines(3, long_line));
  char extra = 'y';
  for (char c : long_line)
    REQUIRE(splitter.feed(std::string_view(&c, 1), out).ok());
  CHECK(splitter.feed(std::string_view(&extra, 1), out).err().code == errc::too_large);
  CHECK(splitter.capacity() <= limit);
}

TEST_CASE("finish reports a truncated last line") {
  line_splitter splitter;
  lines out;
  REQUIRE(splitter.feed("a\npartial", out).ok());
  auto r = splitter.finish();
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::io);
  CHECK(r.err().message ==
        "stream ended inside a line (7 bytes without a final newline): truncated");
  CHECK(out == lines{"a"});
  // The splitter starts over after finish().
  CHECK(splitter.buffered() == 0);
  CHECK(splitter.finish().ok());
  REQUIRE(splitter.feed("b\n", out).ok());
  CHECK(out == lines{"a", "b"});

  // A line already reported as too long is not reported again at the end.
  line_splitter small(4);
  CHECK(small.feed("toolong", out).err().code == errc::too_large);
  CHECK(small.finish().ok());
}

TEST_CASE("reset drops a partial line") {
  line_splitter splitter;
  lines out;
  REQUIRE(splitter.feed("stale half", out).ok());
  splitter.reset();
  REQUIRE(splitter.feed("fresh\n", out).ok());
  CHECK(out == lines{"fresh"});

  line_splitter small(2);
  CHECK(small.feed("abc", out).err().code == errc::too_large);
  small.reset(); // also leaves the skip of the long line
  REQUIRE(small.feed("ok\n", out).ok());
  CHECK(out == lines{"fresh", "ok"});
}

TEST_CASE("a watch stream split anywhere decodes to the same events") {
  std::string stream;
  for (int i = 0; i < 3; ++i)
    stream += R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p)" +
              std::to_string(i) + R"(","namespace":"ns","resourceVersion":")" +
              std::to_string(10 + i) + "\"}}}\n";
  stream +=
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"20","annotations":{"k8s.io/initial-events-end":"true"}}}})"
      "\r\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    INFO("cut at " << cut);
    line_splitter splitter;
    std::vector<watch_event> events;
    auto decode = [&](std::string_view line) {
      auto e = decode_watch_event(line);
      REQUIRE(e.ok());
      events.push_back(std::move(*e));
    };
    REQUIRE(splitter.feed(std::string_view(stream).substr(0, cut), decode).ok());
    REQUIRE(splitter.feed(std::string_view(stream).substr(cut), decode).ok());
    REQUIRE(splitter.finish().ok());
    REQUIRE(events.size() == 4);
    CHECK(events[0].object->key() == "ns/p0");
    CHECK(events[2].object->meta().resource_version == "12");
    CHECK(events[3].is_initial_events_end());
  }
}

// ---- line_buffer: the pull form ----

namespace {

// Writes `bytes` into the buffer through prepare/commit, as the HTTP parser does.
void put(line_buffer& buffer, std::string_view bytes) {
  auto room = buffer.prepare(bytes.size());
  REQUIRE(room.size() >= bytes.size());
  std::copy(bytes.begin(), bytes.end(), room.begin());
  buffer.commit(bytes.size());
}

// Takes every complete line, requiring no errors.
lines take_all(line_buffer& buffer) {
  lines out;
  for (;;) {
    auto line = buffer.next_line();
    REQUIRE(line.ok());
    if (!*line)
      return out;
    out.emplace_back(**line);
  }
}

} // namespace

TEST_CASE("line_buffer: lines come out in place, whatever the write boundaries") {
  for (std::size_t cut = 0; cut <= sample.size(); ++cut) {
    INFO("cut at " << cut);
    line_buffer buffer;
    put(buffer, std::string_view(sample).substr(0, cut));
    lines out = take_all(buffer);
    put(buffer, std::string_view(sample).substr(cut));
    const lines rest = take_all(buffer);
    out.insert(out.end(), rest.begin(), rest.end());
    CHECK(out == sample_lines);
    CHECK(buffer.buffered() == 0);
    CHECK(buffer.finish().ok());
  }

  line_buffer buffer;
  put(buffer, "one\ntw");
  auto room_end = buffer.prepare(1).data(); // the views point into the buffer itself
  auto first = buffer.next_line();
  REQUIRE(first.ok());
  REQUIRE(first->has_value());
  CHECK(**first == "one");
  CHECK((*first)->data() + 4 + 2 == room_end);
  CHECK(buffer.buffered() == 2);
}

TEST_CASE("line_buffer: lines wait until taken, and stop at back-pressure") {
  line_buffer buffer;
  put(buffer, "a\nb\nc");
  auto a = buffer.next_line();
  REQUIRE(a.ok());
  CHECK(**a == "a");
  // The reader pauses here (no credit): "b" and the partial "c" stay buffered.
  CHECK(buffer.buffered() == 3);
  put(buffer, "\n");
  CHECK(take_all(buffer) == lines{"b", "c"});
  CHECK(buffer.buffered() == 0);
}

TEST_CASE("line_buffer: a line over the limit, complete or not, is too_large") {
  line_buffer at_limit(8);
  put(at_limit, "12345678\n1234567\r\n");
  CHECK(take_all(at_limit) == lines{"12345678", "1234567"});

  line_buffer complete(8);
  put(complete, "ok\n123456789\nnext\n");
  auto ok = complete.next_line();
  REQUIRE(ok.ok());
  CHECK(**ok == "ok");
  auto too_long = complete.next_line();
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.err().code == errc::too_large);

  // An unfinished line is reported as soon as it passes the limit, not when its end arrives.
  line_buffer partial(8);
  put(partial, "12345678");
  auto waiting = partial.next_line();
  REQUIRE(waiting.ok());
  CHECK_FALSE(waiting->has_value());
  put(partial, "9");
  auto crossed = partial.next_line();
  REQUIRE_FALSE(crossed.ok());
  CHECK(crossed.err().code == errc::too_large);
}

TEST_CASE("line_buffer: storage holds one partial line plus one write, and is reused") {
  line_buffer buffer(1000);
  const std::string line(300, 'x');
  for (int round = 0; round < 100; ++round) {
    put(buffer, line + "\n" + line.substr(0, 100)); // a complete line and the start of one
    CHECK(take_all(buffer) == lines{line});
    put(buffer, line.substr(100) + "\n");
    CHECK(take_all(buffer) == lines{line});
  }
  CHECK(buffer.capacity() <= 2 * (line.size() + 1 + 100));
  // Byte by byte, the worst case for rescanning and growth.
  for (char c : line)
    put(buffer, std::string_view(&c, 1));
  CHECK(take_all(buffer).empty());
  CHECK(buffer.buffered() == line.size());
  put(buffer, "\n");
  CHECK(take_all(buffer) == lines{line});
}

TEST_CASE("line_buffer: finish reports a truncated last line") {
  line_buffer buffer;
  put(buffer, "a\npartial");
  CHECK(take_all(buffer) == lines{"a"});
  auto r = buffer.finish();
  REQUIRE_FALSE(r.ok());
  CHECK(r.err().code == errc::io);
  CHECK(r.err().message ==
        "stream ended inside a line (7 bytes without a final newline): truncated");
}
