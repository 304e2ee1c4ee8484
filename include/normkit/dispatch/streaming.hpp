// SPDX-License-Identifier: MIT
// normkit: when calls store their output with streaming (non-temporal) stores. The choice changes
// speed only, never a bit.
//
// A call streams when its whole output has at least stream_min_bytes() bytes (core/tuning.hpp,
// streams), decided once per call before any thread-pool split; a call that writes over its
// input (y == x) never streams (core/op.hpp, output_bytes). The threshold starts as
// - NORMKIT_STREAM_MIN_BYTES, read once per process: a byte count, optionally followed by K, M
//   or G (powers of 1024, any case), e.g. 64M; 0 streams every output not written in place.
//   Any other value is ignored, with a message on stderr (once);
// - otherwise a quarter of the last-level cache the CPU reports (core/cpu.hpp), at most 32 MiB,
//   or 8 MiB when it reports none (core/tuning.hpp, stream_threshold_for_cache);
// and set_stream_min_bytes() replaces it at run time. Like the ISA choice, each configuration of
// the library keeps its own (dispatch/state.hpp).
#pragma once

#include <atomic>   // std::atomic
#include <cstddef>  // std::size_t
#include <cstdio>   // std::fprintf
#include <cstdlib>  // std::getenv

#include "../core/abi.hpp"
#include "../core/cpu.hpp"
#include "../core/tuning.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see core/abi.hpp).
namespace impl {

// "<digits>[K|M|G]" (any case) into bytes; false, leaving out alone, for anything else (empty,
// a sign, a space, another suffix, more than size_t holds).
inline bool parse_byte_count(const char* s, std::size_t& out) {
  if (s == nullptr || *s < '0' || *s > '9')
    return false;
  constexpr std::size_t max = ~std::size_t(0);
  std::size_t v = 0;
  for (; *s >= '0' && *s <= '9'; ++s) {
    const std::size_t digit = static_cast<std::size_t>(*s - '0');
    if (v > (max - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  unsigned shift = 0;
  if (*s == 'k' || *s == 'K')
    shift = 10, ++s;
  else if (*s == 'm' || *s == 'M')
    shift = 20, ++s;
  else if (*s == 'g' || *s == 'G')
    shift = 30, ++s;
  if (*s != '\0' || (shift != 0 && v > (max >> shift)))
    return false;
  out = v << shift;
  return true;
}

// The threshold a process starts with: the environment's, or the cache's.
inline std::size_t initial_stream_min_bytes() {
  const char* value = std::getenv("NORMKIT_STREAM_MIN_BYTES");
  std::size_t bytes = 0;
  if (value != nullptr && value[0] != '\0') {
    if (parse_byte_count(value, bytes))
      return bytes;
    std::fprintf(stderr,
                 "normkit: NORMKIT_STREAM_MIN_BYTES=\"%.40s\" is not a byte count (e.g. 8388608 or 8M); "
                 "ignored\n",
                 value);
  }
  return detail::stream_threshold_for_cache(last_level_cache_bytes());
}

inline std::atomic<std::size_t>& stream_state() {
  static std::atomic<std::size_t> threshold{initial_stream_min_bytes()};
  return threshold;
}

}  // namespace impl

// Outputs of at least this many bytes are stored with streaming stores.
inline std::size_t stream_min_bytes() {
  return impl::stream_state().load(std::memory_order_relaxed);
}

// Replaces the threshold for the calls that start afterwards (0: stream every output; SIZE_MAX:
// never). Thread-safe; results never change, only speed.
inline void set_stream_min_bytes(std::size_t bytes) {
  impl::stream_state().store(bytes, std::memory_order_relaxed);
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
