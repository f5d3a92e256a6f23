#pragma once
// A zstd dictionary trained on one informer's objects: what lets an object keep its text
// compressed (object_packer.hpp) and give back the same bytes when read.
//
// Why a dictionary: one object of a few KB compresses poorly alone (zstd finds little to refer
// back to inside it), but the objects of one kind are nearly alike (a workload's pods share their
// labels, owner, managedFields and most of their spec), so a dictionary of what they share lets
// each object keep about what is its own: its name, uid, times and addresses.
//
// Immutable once made, and shared by every object compressed with it (they keep it alive):
// compressing and decompressing take a context of the calling thread's own.

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

struct ZSTD_CDict_s;
struct ZSTD_DDict_s;

namespace kinformer {

class text_dictionary {
public:
  // At most this many bytes of dictionary (zstd's advice for small records: ~100 times less
  // than the samples it is trained from).
  static constexpr std::size_t capacity = 16 * 1024;

  // Trains a dictionary from `samples` (texts of the objects it will compress). When zstd cannot
  // train from them (too few, or too small), their texts themselves, most recent last, serve as a
  // dictionary of raw content. Null when there is nothing to learn from.
  static std::shared_ptr<const text_dictionary> train(std::span<const std::string> samples);

  text_dictionary(const text_dictionary&) = delete;
  text_dictionary& operator=(const text_dictionary&) = delete;
  ~text_dictionary();

  // `text` compressed, written over `out` (resized to fit); false when zstd fails (never for a
  // text in memory, but the caller keeps the text as it is then).
  bool compress(std::string_view text, std::string& out) const;
  // Writes the `size` bytes that `packed` holds to `out`; false when `packed` is not what
  // compress() made of `size` bytes with this dictionary.
  bool decompress(std::string_view packed, char* out, std::size_t size) const;

  // The dictionary's own bytes, and whether zstd trained it (false: raw content).
  std::size_t bytes() const noexcept { return bytes_; }
  bool trained() const noexcept { return trained_; }

private:
  text_dictionary(ZSTD_CDict_s* compress, ZSTD_DDict_s* decompress, std::size_t bytes,
                  bool trained) noexcept
      : compress_(compress), decompress_(decompress), bytes_(bytes), trained_(trained) {}

  ZSTD_CDict_s* compress_;
  ZSTD_DDict_s* decompress_;
  std::size_t bytes_;
  bool trained_;
};

} // namespace kinformer
