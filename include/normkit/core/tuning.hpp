// SPDX-License-Identifier: MIT
// normkit: performance thresholds. They choose between loops that give the same bits, never
// between results; tests size their cases from them so that every loop runs.
#pragma once

#include <cstddef>  // std::size_t

#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// Calls whose output has at least this many bytes store it with non-temporal (streaming)
// stores: they pay for outputs that do not fit the cache and cost when the data is hot
// (docs/performance.md).
constexpr std::size_t stream_min_bytes = std::size_t(8) << 20;

// The cache line: streamed output starts at one, and the next row is prefetched one at a time.
constexpr std::size_t cache_line = 64;

// norm_rows takes the statistics of up to one vector width of rows at a time, as many as fit
// in this many input bytes (at least one): their output passes read them again from L1.
constexpr std::size_t group_max_bytes = 8192;

// A composite op (ops/add_norm.hpp) runs its stages over chunks of rows holding about this many
// bytes of intermediate data (the stored residual, the fp32 sums): the next stage reads them from
// L1/L2, not memory (docs/performance.md).
constexpr std::size_t compose_chunk_bytes = 32768;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
