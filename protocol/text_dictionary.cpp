#include "protocol/text_dictionary.hpp"

#include <zdict.h>
#include <zstd.h>

#include <vector>

namespace kinformer {

namespace {

// zstd's level for objects: 3, its default, compresses a pod's metadata with a dictionary at
// about the ratio of level 9, at a fraction of its cost (README, Benchmarks).
constexpr int compression_level = 3;

struct compress_context_deleter {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct decompress_context_deleter {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

// Each thread's own contexts: zstd's are not shared between threads, and making one per call
// would allocate its tables every time.
ZSTD_CCtx* make_compress_context() {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  // No checksum, content size or dictionary ID in a frame: the object knows its text's size and
  // its dictionary, and a few bytes an object are what this is for.
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_dictIDFlag, 0);
  return c;
}
ZSTD_CCtx* compress_context() {
  thread_local std::unique_ptr<ZSTD_CCtx, compress_context_deleter> context(
      make_compress_context());
  return context.get();
}
ZSTD_DCtx* decompress_context() {
  thread_local std::unique_ptr<ZSTD_DCtx, decompress_context_deleter> context(ZSTD_createDCtx());
  return context.get();
}

// The newest samples, whole, up to `capacity` bytes: a dictionary of raw content.
std::string raw_content(std::span<const std::string> samples, std::size_t capacity) {
  std::size_t first = samples.size(), bytes = 0;
  while (first > 0 && bytes + samples[first - 1].size() <= capacity)
    bytes += samples[--first].size();
  std::string out;
  out.reserve(bytes);
  for (std::size_t i = first; i < samples.size(); ++i)
    out += samples[i];
  return out;
}

} // namespace

std::shared_ptr<const text_dictionary>
text_dictionary::train(std::span<const std::string> samples) {
  std::string joined;
  std::vector<std::size_t> sizes;
  sizes.reserve(samples.size());
  for (const auto& s : samples) {
    joined += s;
    sizes.push_back(s.size());
  }
  std::string dictionary(capacity, '\0');
  const std::size_t trained =
      joined.empty() ? 0
                     : ZDICT_trainFromBuffer(dictionary.data(), dictionary.size(), joined.data(),
                                             sizes.data(), static_cast<unsigned>(sizes.size()));
  const bool is_trained = joined.size() > 0 && !ZDICT_isError(trained);
  if (is_trained)
    dictionary.resize(trained);
  else
    dictionary = raw_content(samples, capacity);
  if (dictionary.empty())
    return nullptr;
  // Both copy the dictionary's bytes: `dictionary` may go.
  ZSTD_CDict* c = ZSTD_createCDict(dictionary.data(), dictionary.size(), compression_level);
  ZSTD_DDict* d = ZSTD_createDDict(dictionary.data(), dictionary.size());
  if (!c || !d) {
    ZSTD_freeCDict(c);
    ZSTD_freeDDict(d);
    return nullptr;
  }
  return std::shared_ptr<const text_dictionary>(
      new text_dictionary(c, d, dictionary.size(), is_trained));
}

text_dictionary::~text_dictionary() {
  ZSTD_freeCDict(compress_);
  ZSTD_freeDDict(decompress_);
}

bool text_dictionary::compress(std::string_view text, std::string& out) const {
  out.resize(ZSTD_compressBound(text.size()));
  ZSTD_CCtx* context = compress_context();
  if (!context || ZSTD_isError(ZSTD_CCtx_refCDict(context, compress_)))
    return false;
  const std::size_t n = ZSTD_compress2(context, out.data(), out.size(), text.data(), text.size());
  if (ZSTD_isError(n))
    return false;
  out.resize(n);
  return true;
}

bool text_dictionary::decompress(std::string_view packed, char* out, std::size_t size) const {
  ZSTD_DCtx* context = decompress_context();
  if (!context)
    return false;
  const std::size_t n =
      ZSTD_decompress_usingDDict(context, out, size, packed.data(), packed.size(), decompress_);
  return !ZSTD_isError(n) && n == size;
}

} // namespace kinformer
