#include "protocol/json_nesting.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define KINFORMER_NESTING_AVX2 1
#endif

namespace kinformer {

namespace {

// One byte at a time: the reference, and the tail shorter than a block.
std::size_t scan_bytes(const char* p, std::size_t n, json_nesting& s, bool& ended) {
  for (std::size_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (s.in_string) {
      if (s.escaped)
        s.escaped = false;
      else if (c == '\\')
        s.escaped = true;
      else if (c == '"')
        s.in_string = false;
      continue;
    }
    if (c == '"') {
      s.in_string = true;
    } else if (c == '{' || c == '[') {
      ++s.depth;
    } else if ((c == '}' || c == ']') && s.depth > 0 && --s.depth == 0) {
      ended = true;
      return i + 1;
    }
  }
  ended = false;
  return n;
}

#if defined(KINFORMER_NESTING_AVX2)

#define KINFORMER_AVX2 __attribute__((target("avx2,pclmul,bmi,popcnt")))

// The bytes of a 64-byte block equal to `c`, as a bit mask (bit i: byte i).
KINFORMER_AVX2 inline std::uint64_t equal_mask(__m256i lo, __m256i hi, char c) {
  const __m256i v = _mm256_set1_epi8(c);
  const auto low = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)));
  const auto high = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)));
  return low | (std::uint64_t{high} << 32);
}

// Bit i set when an odd number of bits at or below i are set in `bits`.
KINFORMER_AVX2 inline std::uint64_t prefix_xor(std::uint64_t bits) {
  const __m128i all_ones = _mm_set1_epi8(static_cast<char>(0xFF));
  const __m128i product =
      _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<long long>(bits)), all_ones, 0);
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(product));
}

// The bytes escaped by a backslash (simdjson's branchless rule: in a run of backslashes every
// second one escapes the byte after it). `escape_carry` is 1 when the previous block's last
// byte escapes this block's first.
inline std::uint64_t escaped_bytes(std::uint64_t backslash, std::uint64_t& escape_carry) {
  backslash &= ~escape_carry;
  const std::uint64_t follows_escape = backslash << 1 | escape_carry;
  constexpr std::uint64_t even_bits = 0x5555555555555555ULL;
  const std::uint64_t odd_sequence_starts = backslash & ~even_bits & ~follows_escape;
  std::uint64_t sequences_starting_on_even_bits = 0;
  escape_carry =
      __builtin_add_overflow(odd_sequence_starts, backslash, &sequences_starting_on_even_bits) ? 1
                                                                                               : 0;
  const std::uint64_t invert_mask = sequences_starting_on_even_bits << 1;
  return (even_bits ^ invert_mask) & follows_escape;
}

KINFORMER_AVX2 std::size_t scan_blocks(const char* p, std::size_t n, json_nesting& s, bool& ended) {
  std::uint64_t escape_carry = s.escaped ? 1 : 0;
  std::uint64_t string_carry = s.in_string ? ~std::uint64_t{0} : 0;
  std::uint64_t depth = s.depth;
  const __m256i case_bit = _mm256_set1_epi8(0x20);
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32));
    const std::uint64_t escaped = escaped_bytes(equal_mask(lo, hi, '\\'), escape_carry);
    const std::uint64_t quotes = equal_mask(lo, hi, '"') & ~escaped;
    // Bits from an opening quote up to (not including) its closing quote.
    const std::uint64_t strings = prefix_xor(quotes) ^ string_carry;
    string_carry = static_cast<std::uint64_t>(static_cast<std::int64_t>(strings) >> 63);
    // '[' | 0x20 == '{' and ']' | 0x20 == '}', and no other byte maps to either.
    const __m256i lo_folded = _mm256_or_si256(lo, case_bit);
    const __m256i hi_folded = _mm256_or_si256(hi, case_bit);
    const std::uint64_t opens = equal_mask(lo_folded, hi_folded, '{') & ~strings;
    const std::uint64_t closes = equal_mask(lo_folded, hi_folded, '}') & ~strings;
    if ((opens | closes) == 0)
      continue;
    const auto close_count = static_cast<std::uint64_t>(__builtin_popcountll(closes));
    if (depth > close_count) { // cannot reach zero in this block
      depth = depth + static_cast<std::uint64_t>(__builtin_popcountll(opens)) - close_count;
      continue;
    }
    for (std::uint64_t brackets = opens | closes; brackets != 0; brackets &= brackets - 1) {
      const int bit = __builtin_ctzll(brackets);
      if ((opens >> bit) & 1) {
        ++depth;
      } else if (depth > 0 && --depth == 0) {
        s = json_nesting{};
        ended = true;
        return i + static_cast<std::size_t>(bit) + 1;
      }
    }
  }
  s.depth = depth;
  s.in_string = string_carry != 0;
  s.escaped = escape_carry != 0;
  // The escape carry also counts a backslash outside a string (never in valid JSON): the byte
  // reference only escapes inside strings.
  if (!s.in_string)
    s.escaped = false;
  const std::size_t rest = scan_bytes(p + i, n - i, s, ended);
  return i + rest;
}

bool has_avx2() {
  static const bool supported = __builtin_cpu_supports("avx2") &&
                                __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("bmi") &&
                                __builtin_cpu_supports("popcnt");
  return supported;
}

#endif

} // namespace

std::size_t json_nesting::scan(const char* p, std::size_t n, bool& ended) {
#if defined(KINFORMER_NESTING_AVX2)
  if (n >= 64 && has_avx2())
    return scan_blocks(p, n, *this, ended);
#endif
  return scan_bytes(p, n, *this, ended);
}

} // namespace kinformer
