// A List body, cut into arbitrary chunks, through the streaming list decoder, as the API client
// reads a list; the same bytes at once as the limit.
// Properties: no crash; the outcome (items, envelope, or failure) does not depend on where the
// body was cut; nothing decoded points into the bytes fed (each chunk is fed from a buffer of its
// own, overwritten and freed once fed, as the API client reuses its read buffer: a view kept
// into one reads junk, or under ASan fails at once).

#include "protocol/list_decoder.hpp"
#include "tests/fuzz/fuzz_input.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace kinformer;
using kinformer::fuzz::require;

namespace {

struct outcome {
  bool ok = false;
  std::vector<std::string> items; // keys and texts
  std::string resource_version, continue_token;
};

template <class Chunks>
outcome decode(const Chunks& chunks) {
  list_decoder decoder({}, 8192); // small, so that oversized items are explored too
  std::vector<object_ptr> items;
  outcome out;
  for (std::string_view chunk : chunks) {
    auto read = std::make_unique<char[]>(chunk.size());
    std::memcpy(read.get(), chunk.data(), chunk.size());
    const bool fed = decoder.feed({read.get(), chunk.size()}, items).ok();
    std::memset(read.get(), 0xff, chunk.size());
    if (!fed)
      return out;
  }
  auto page = decoder.finish(items);
  if (!page)
    return out;
  out.ok = true;
  out.resource_version = page->resource_version;
  out.continue_token = page->continue_token;
  for (const auto& item : items) {
    require(item != nullptr, "a null item");
    out.items.push_back(std::string(item->key()));
    out.items.emplace_back(item->json_text());
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::fuzz_input input(data, size);
  const std::vector<std::string_view> at_once{input.text()};
  auto whole = decode(at_once);
  auto cut = decode(input.chunks());
  require(whole.ok == cut.ok, "success depends on where the body was cut");
  require(whole.items == cut.items, "the items depend on where the body was cut");
  require(whole.resource_version == cut.resource_version &&
              whole.continue_token == cut.continue_token,
          "the envelope depends on where the body was cut");
  return 0;
}
