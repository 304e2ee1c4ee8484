// SPDX-License-Identifier: MIT
// normkit: the rows a composite call reads next, as a hint its stages prefetch. A composite op
// (dispatch/compose.hpp) runs compute-bound stages over a chunk of rows that is in cache; by the
// time the next chunk's first stage reads its rows, the hardware prefetchers have gone quiet, so
// it waits on DRAM. The chunk's last stage gets the next chunk's input rows and prefetches them
// into L2 as it goes (docs/performance.md, "prefetching the next chunk").
#pragma once

#include <cstddef>  // std::size_t

#include "abi.hpp"
#include "math.hpp"    // min_of
#include "tuning.hpp"  // prefetches

namespace normkit {

// In the table namespace: the hint travels inside argument bundles (core/abi.hpp).
namespace NORMKIT_TABLE_NAMESPACE {
// A hint, not an operand (nothing is read through it, no bit depends on it): up to two matrices
// whose rows the caller reads next. While a kernel works on element i of its row r < rows, it may
// prefetch the bytes at at[k] + r * stride[k] + i * elem. Null at[0]: no hint.
struct rows_ahead {
  const void* at[2] = {nullptr, nullptr};
  std::size_t stride[2] = {0, 0};  // bytes
  std::size_t rows = 0, elem = 0;
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

using rows_ahead = NORMKIT_TABLE_NAMESPACE::rows_ahead;

// The hint for the chunk of rows [r0, r0 + n) of a composite call of `rows` rows: the next
// chunk's rows of x (and of the residual: null when the op has none), when the call's input is far
// enough to be worth prefetching (core/tuning.hpp); none for the last chunk.
template <class In>
rows_ahead next_chunk_ahead(std::size_t r0, std::size_t n, std::size_t rows, std::size_t cols, const In* x,
                            std::size_t x_stride, const In* residual = nullptr,
                            std::size_t residual_stride = 0) {
  rows_ahead h;
  if (r0 + n >= rows || !prefetches(rows * cols * sizeof(In), cols * sizeof(In)))
    return h;
  h.at[0] = x + (r0 + n) * x_stride;
  h.stride[0] = x_stride * sizeof(In);
  if (residual) {
    h.at[1] = residual + (r0 + n) * residual_stride;
    h.stride[1] = residual_stride * sizeof(In);
  }
  h.rows = min_of(n, rows - r0 - n);
  h.elem = sizeof(In);
  return h;
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
