// SPDX-License-Identifier: MIT
// normkit: the parameter-gradient fold of the backward passes, public so that a caller can split
// a backward call across threads and get the bits of one call (docs/contract.md, "Backward").
//
//   rows are cut into blocks of backward_block_rows (64) from the call's first row;
//   *_backward_partial writes dx and one partial row of dgamma (dbeta) per block;
//   backward_reduce folds backward_blocks(rows) partial rows in a tree fixed by their number.
//
// A thread that takes rows [r0, r1) with r0 a multiple of 64 calls the partial entry point on its
// rows with partials + (r0 / 64) * cols; after all are done, backward_reduce(partials,
// backward_blocks(rows), cols, dgamma) gives exactly the dgamma of one *_backward call.
#pragma once

#include "core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "core/abi.hpp"
#include "core/backward.hpp"
#include "core/status.hpp"
#include "core/validate.hpp"
#include "dispatch/backward_call.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {

// Rows per block of the parameter gradients (fixed: it is part of their bits).
constexpr std::size_t backward_block_rows = detail::grad_block_rows;

// Partial rows a call over `rows` rows writes: ceil(rows / 64).
constexpr std::size_t backward_blocks(std::size_t rows) {
  return detail::grad_blocks(rows);
}

// out[j] = the contract's tree fold of partials[k * cols + j], k < blocks (NaN canonical); +0 when
// blocks == 0. Returns, touching nothing: null_pointer, misaligned_pointer, size_overflow,
// overlapping_output (out overlapping the partials).
[[nodiscard]] inline status backward_reduce(const float* partials, std::size_t blocks, std::size_t cols,
                                            float* out) {
  if (cols == 0)
    return status::ok;
  const impl::operand in[] = {impl::operand_of(partials, blocks, cols, cols, blocks == 0)};
  const impl::operand o[] = {impl::operand_of(out, 1, cols, cols)};
  if (const status st = impl::check_operands(in, o, {-1}); st != status::ok)
    return st;
  impl::fold_partials(partials, blocks, cols, out);
  return status::ok;
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "core/fp_precise_end.hpp"
