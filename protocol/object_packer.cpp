#include "protocol/object_packer.hpp"

#include "protocol/text_dictionary.hpp"

namespace kinformer {

std::shared_ptr<const text_dictionary> object_packer::dictionary_for(std::string_view text) {
  if (ready_.load(std::memory_order_acquire))
    return dictionary_; // written before ready_ was set, never after
  std::lock_guard lock(mutex_);
  if (ready_.load(std::memory_order_relaxed))
    return dictionary_;
  samples_.emplace_back(text);
  sample_bytes_ += text.size();
  if (samples_.size() < options_.samples && sample_bytes_ < options_.sample_bytes)
    return nullptr;
  dictionary_ = text_dictionary::train(samples_);
  if (!dictionary_) { // nothing to learn from (empty texts): gather anew
    samples_.clear();
    sample_bytes_ = 0;
    return nullptr;
  }
  samples_ = {};
  ready_.store(true, std::memory_order_release);
  // This object is a sample, kept as it is, as the ones before it were.
  return nullptr;
}

std::shared_ptr<const text_dictionary> object_packer::dictionary() const {
  if (ready_.load(std::memory_order_acquire))
    return dictionary_;
  return nullptr;
}

} // namespace kinformer
