#pragma once
// Splits a watch stream into lines: feed byte chunks as they arrive, get every complete line.
//
// A watch response is one JSON document per '\n'-terminated line, cut into chunks anywhere.
// Lines that lie wholly inside a chunk are handed out as views into the chunk (no copy); only a
// line that straddles chunks is gathered in an internal buffer, which is reused and never grows
// beyond the line limit.

#include "protocol/result.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kinformer {

// A non-owning reference to a callable taking one line. Unlike std::function it never
// allocates; it must not outlive the callable (pass it straight to feed()).
class line_sink {
public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, line_sink>>>
  line_sink(F&& f) noexcept // NOLINT: implicit, so a lambda can be passed directly
      : target_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* target, std::string_view line) {
          (*static_cast<std::remove_reference_t<F>*>(target))(line);
        }) {}

  void operator()(std::string_view line) const { call_(target_, line); }

private:
  void* target_;
  void (*call_)(void*, std::string_view);
};

class line_splitter {
public:
  // Kubernetes objects are at most ~1.5 MiB in etcd; a watch line adds a small envelope.
  static constexpr std::size_t default_max_line_bytes = 16 * 1024 * 1024;

  // `max_line_bytes` bounds a line's bytes before its '\n' (a trailing '\r' counts).
  explicit line_splitter(std::size_t max_line_bytes = default_max_line_bytes);

  // Calls `on_line` for every line `chunk` completes, in order, without the "\n" or "\r\n".
  // The view is valid only during the call. Empty lines are delivered too.
  //
  // A line over the limit is skipped up to its '\n' and reported once, as an errc::too_large
  // error returned after the whole chunk was processed: the lines around it are still
  // delivered, and the splitter carries on with the next line.
  status_result feed(std::string_view chunk, line_sink on_line);
  // The same, appending each line to `out`.
  status_result feed(std::string_view chunk, std::vector<std::string>& out);

  // The end of the stream: an errc::io error when it stopped inside a line (truncated). The
  // splitter is then empty and ready for a new stream.
  status_result finish();
  // Drops any partial line (for example when a watch is cancelled and restarted).
  void reset() noexcept;

  // Bytes of an incomplete line held while waiting for its end.
  std::size_t buffered() const noexcept { return partial_.size(); }
  std::size_t max_line_bytes() const noexcept { return max_line_bytes_; }
  // Heap bytes held by the reused buffer (never more than max_line_bytes()).
  std::size_t capacity() const noexcept { return partial_.capacity(); }

private:
  // Appends to the partial line without ever reserving past the limit.
  void append_partial(std::string_view bytes);

  std::size_t max_line_bytes_;
  // The start of a line that continues in a later chunk. A vector, because std::string's
  // reserve() may round the capacity up past the limit.
  std::vector<char> partial_;
  bool skipping_oversized_ = false; // inside a line already reported as too long
};

// The pull form of the splitter, for a reader that stops on back-pressure (the watch stream at
// zero credit). Bytes are written straight into the buffer (prepare/commit, so the HTTP parser
// decodes chunked bodies into it), complete lines are taken out as views of the buffer, in
// place, when the reader is ready for them; nothing is copied per line. The unread bytes stay
// until taken, so a reader that only refills after taking every complete line holds at most
// one partial line plus one read.
class line_buffer {
public:
  explicit line_buffer(std::size_t max_line_bytes = line_splitter::default_max_line_bytes);

  // Writable room for at least `min_bytes` after the unread bytes; fill a prefix of it, then
  // commit() that many bytes. Invalidates the views next_line() returned.
  std::span<char> prepare(std::size_t min_bytes);
  void commit(std::size_t bytes) noexcept;

  // The next complete line without its "\n" or "\r\n" (empty lines included), valid until the
  // next prepare(); nullopt when no complete line is buffered. A line, complete or not, longer
  // than the limit is an errc::too_large error: a watch cannot skip an event, so the caller
  // ends the stream.
  result<std::optional<std::string_view>> next_line();

  // The end of the stream: an errc::io error when it stopped inside a line (truncated).
  status_result finish() const;

  // Bytes committed and not yet taken as lines.
  std::size_t buffered() const noexcept { return end_ - begin_; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t max_line_bytes() const noexcept { return max_line_bytes_; }

private:
  std::size_t max_line_bytes_;
  std::unique_ptr<char[]> data_; // no value-initialisation: the parser overwrites it anyway
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;   // first unread byte
  std::size_t end_ = 0;     // one past the last committed byte
  std::size_t scanned_ = 0; // bytes after begin_ known to hold no '\n' (no rescans)
};

} // namespace kinformer
