// normkit: performance thresholds. They choose between loops that give the same bits, never
// between results; tests size their cases from them so that every loop runs.
#pragma once

#include <cstddef>  // std::size_t

namespace normkit {
namespace detail {

// Calls whose output has at least this many bytes store it with non-temporal (streaming)
// stores: PERF.md lesson 3 -- they pay for outputs that do not fit the cache (+25-45 % at the L3
// edge) and cost up to 70 % when the data is hot.
constexpr std::size_t stream_min_bytes = std::size_t(8) << 20;

// Rows of at most this many input bytes get their statistics one row ahead of the output pass
// (norm_rows). Longer rows gain nothing from it (their own loops hide the latency) and would
// push the row being written out of L1. (Planning four rows ahead measured the same.)
constexpr std::size_t plan_ahead_max_row_bytes = 2048;

}  // namespace detail
}  // namespace normkit
