#pragma once
// Compressed objects for one informer: the first objects it makes are kept as they are and their
// texts saved as samples; from those a dictionary is trained (text_dictionary.hpp), and every
// object made after keeps its text compressed with it (object.hpp: packed()).
//
// Why: memory. Objects are kept as their JSON text, which is as lean as a copy of what the
// server sent can be (a pod's text is ~1.1x its size in the store), but no leaner: a
// metadata-only pod's text is most of its cost, and more than half of that text is
// managedFields. Compressed against what the informer's objects share, a pod's metadata keeps
// about a fifth of its bytes. What it costs: compressing each object as it arrives, and
// decompressing its text for every reader of the text (the read API, handlers that send objects
// on, field selectors); meta() reads nothing compressed.
//
// One per informer, shared by its list and watch decoders (two threads): thread-safe. The
// dictionary is kept across relists and for the informer's life: it is what the objects share,
// and they change slowly.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kinformer {

class text_dictionary;

struct packer_options {
  // Samples are gathered until there are this many, or this many bytes of them.
  std::size_t samples = 256;
  std::size_t sample_bytes = 512 * 1024;
};

class object_packer {
public:
  explicit object_packer(packer_options options = {}) : options_(options) {}

  // The dictionary to compress an object of text `text` with; null while samples are still being
  // gathered, when `text` becomes one (its object is then kept as it is).
  std::shared_ptr<const text_dictionary> dictionary_for(std::string_view text);

  // The dictionary once trained (null before): for tests and metrics.
  std::shared_ptr<const text_dictionary> dictionary() const;

private:
  packer_options options_;
  std::atomic<bool> ready_{false}; // set once `dictionary_` is, never unset
  mutable std::mutex mutex_;       // guards what follows until ready_
  std::shared_ptr<const text_dictionary> dictionary_;
  std::vector<std::string> samples_;
  std::size_t sample_bytes_ = 0;
};

} // namespace kinformer
