// One object's text through the ingest scanner (simdjson), checked against Boost.JSON.
// Properties: no crash; every object accepted has a tree (Boost.JSON, as object::tree() parses
// it: a handler asking for one must get it); the metadata it reads
// does not change when the same value is written differently (whitespace, escapes, key order of
// other members); a text it accepts comes back byte for byte; the scan's fast path (simdjson's
// first stage and a grammar check, then only the metadata read) finds what the full walk finds,
// and fails where it fails;
// drop_managed_fields() cutting the text gives the object the same transform on a tree gives;
// the object kept compressed (object_packer.hpp) gives back the same text and metadata.

#include "protocol/object.hpp"
#include "protocol/object_packer.hpp"
#include "protocol/object_scan.hpp"
#include "protocol/transforms.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/protocol/support/scan_description.hpp"

#include <boost/json.hpp>

#include <string>

using namespace kinformer;
using kinformer::fuzz::require;

namespace {

std::string describe(const object& obj) {
  const auto& m = obj.meta();
  std::string out;
  for (auto part : {m.namespace_, m.name, m.uid, m.resource_version, m.deletion_timestamp,
                    obj.kind(), obj.api_version()}) {
    out.append(part);
    out += '\0';
  }
  out += std::to_string(m.generation);
  for (const auto* map : {&m.labels, &m.annotations})
    for (const auto& [key, value] : *map) {
      out.append(key);
      out += '=';
      out.append(value);
      out += '\0';
    }
  for (const auto& ref : m.owner_references) {
    for (auto part : {ref.api_version, ref.kind, ref.name, ref.uid})
      out.append(part);
    out += ref.controller ? 'c' : '-';
  }
  return out;
}

// drop_managed_fields() cuts the member out of the text; the same transform chained with a no-op
// is applied to a tree. Both must read the same metadata of any text, and the cut text's value
// must be the received value less the member. (Its value is compared with `tree`, the received
// text's, transformed: the tree path's text was written by Boost.JSON, whose number parsing does
// not always read back the double it wrote; a text the cut leaves to the tree must then be the
// tree path's text.)
void same_when_cut(std::string_view text, const boost::json::value& tree) {
  static const auto tree_strip =
      chain_transforms({drop_managed_fields(),
                        std::make_shared<const object_transform>([](boost::json::value&) {})});
  auto by_cut = object::parse(text, drop_managed_fields().get());
  auto by_tree = object::parse(text, tree_strip.get());
  require(by_cut.ok() == by_tree.ok(), "cutting managedFields accepts what a tree does not");
  if (!by_cut)
    return;
  require(describe(**by_cut) == describe(**by_tree),
          "cutting managedFields reads other metadata than a tree");
  boost::json::value expected = tree;
  (*drop_managed_fields())(expected);
  // A text the cut leaves to the tree (object.cpp's cut_in_doubt) is the tree path's rewrite.
  require((*by_cut)->tree() == expected || (*by_cut)->to_json() == (*by_tree)->to_json(),
          "cutting managedFields leaves another value than a tree");
}

// The same text made with a packer whose dictionary is ready (trained on a few pods' texts): the
// same metadata, and the same text when asked for.
void same_when_packed(std::string_view text, const object& plain) {
  static object_packer packer(packer_options{4, 1 << 20});
  static const bool trained = [] {
    for (int i = 0; i < 4; ++i)
      (void)object::parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-)" +
                              std::to_string(i) +
                              R"(","namespace":"shop","labels":{"app":"web"}},"spec":{}})",
                          nullptr, nullptr, nullptr, &packer);
    return packer.dictionary() != nullptr;
  }();
  require(trained, "no dictionary from the samples");
  auto packed = object::parse(text, nullptr, nullptr, nullptr, &packer);
  require(packed.ok(), "packing refuses a text made as it is");
  require((*packed)->json_text() == text, "a packed object's text differs from the text received");
  require(describe(**packed) == describe(plain), "a packed object reads other metadata");
  require((*packed)->resource_version_at() == plain.resource_version_at(),
          "a packed object places its resourceVersion elsewhere");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto differ = testing::object_scans_differ(text); !differ.empty())
    fuzz::violated(differ.c_str());
  auto scanned = object::parse(text);
  if (!scanned)
    return 0;
  require((*scanned)->json_text() == text, "the stored text differs from the text received");
  same_when_packed(text, **scanned);

  // What a handler asking for the tree gets: it must exist for every object accepted.
  boost::json::value tree;
  try {
    tree = (*scanned)->tree();
  } catch (const std::exception&) {
    fuzz::violated("the scanner accepted text object::tree() cannot parse");
  }

  const std::string rewritten = boost::json::serialize(tree);
  // Boost.JSON reads 0e9999 as NaN (0 times an infinite power) and writes it as the non-JSON
  // "NaN": such a rewrite is no longer JSON, whoever reads it.
  if (rewritten.find("NaN") != std::string::npos || rewritten.find("Infinity") != std::string::npos)
    return 0;
  same_when_cut(text, tree);
  auto again = object::parse(rewritten);
  require(again.ok(), "the scanner rejects the same value written by Boost.JSON");
  require(describe(**scanned) == describe(**again),
          "the metadata read depends on how the value was written");
  return 0;
}
