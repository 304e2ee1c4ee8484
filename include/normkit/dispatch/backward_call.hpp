// SPDX-License-Identifier: MIT
// normkit: the folded backward call -- the backward op run block by block (64 rows) into partial
// rows, folded in the contract's fixed tree as they come (core/backward.hpp, grad_tree), so one
// call gives the bits of the partial / reduce pair on any split at block boundaries. Also
// backward_reduce's column-tiled fold, and the forward variants' run: statistics, then the plain
// norm, over row chunks whose input is still cached for the second pass.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <atomic>       // std::atomic
#include <cstddef>      // std::size_t
#include <cstring>      // std::memcpy
#include <memory>       // std::unique_ptr
#include <new>          // std::nothrow
#include <type_traits>  // std::is_same

#include "../core/abi.hpp"
#include "../core/backward.hpp"
#include "../core/cpu.hpp"
#include "../core/math.hpp"
#include "../core/status.hpp"
#include "../core/tuning.hpp"
#include "../core/validate.hpp"
#include "../ops/list.hpp"
#include "run.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace impl {
using namespace ::normkit::detail;

// The dispatched path, or (Ref) the scalar reference: the bits.
template <class Op, class Policy, bool Ref, class... Ts>
void run_path(const typename Op::template args<Ts...>& a) {
  if constexpr (Ref)
    Op::template reference<Policy, Ts...>(a);
  else
    run<Op, Policy, Ts...>(a);
}

// Whether a backward call's dx is big enough for streaming stores (dispatch/streaming.hpp).
template <class T>
bool dx_streams(std::size_t rows, std::size_t cols) {
  return streams(rows * cols * sizeof(T), stream_min_bytes());
}

// Rows per group of the backward kernels' output pass for calls whose inputs are not far: the
// CPU's (core/tuning.hpp, grad_group_rows_for) unless set_grad_group_rows replaced it; far calls
// take two (backward_call). Speed only, never a bit; a kernel without groups of four (all but
// AVX-512: simd/backward_rows.hpp) runs two.
inline std::atomic<std::size_t>& grad_group_state() {
  static std::atomic<std::size_t> rows{grad_group_rows_for(l1_data_cache_ways())};
  return rows;
}
inline std::size_t grad_group_rows() {
  return grad_group_state().load(std::memory_order_relaxed);
}
// For the calls that start afterwards: 4, or 2 for anything else (the tests run both on any CPU).
inline void set_grad_group_rows(std::size_t rows) {
  grad_group_state().store(rows == 4 ? 4 : 2, std::memory_order_relaxed);
}

// Columns per tile of the stack-only folds: a tree of up to 2^64 blocks in 65 x 64 floats.
constexpr std::size_t grad_tile = 64;

// contract: the tree fold of `blocks` partial rows (blocks x cols, contiguous) into out (cols).
inline void fold_partials(const float* partials, std::size_t blocks, std::size_t cols, float* out) {
  for (std::size_t c0 = 0; c0 < cols; c0 += grad_tile) {
    const std::size_t nc = min_of(grad_tile, cols - c0);
    float slots[66 * grad_tile];
    grad_tree t{slots, nc};
    for (std::size_t b = 0; b < blocks; ++b) {
      std::memcpy(t.next(), partials + b * cols + c0, nc * sizeof(float));
      t.push();
    }
    std::memcpy(out + c0, t.finish(), nc * sizeof(float));
  }
}

template <class Op, class A>
A block_args(const A& a, std::size_t r0, std::size_t n) {
  A b = a;
  b.dy = a.dy + r0 * a.dy_stride;
  b.x = a.x + r0 * a.x_stride;
  b.dx = a.dx + r0 * a.dx_stride;
  b.rstd = a.rstd + r0;
  if constexpr (Op::centered)
    b.mean = a.mean + r0;
  b.rows = n;
  return b;
}

template <class Op, class A>
float* dbeta_of(const A& a) {
  if constexpr (Op::centered)
    return a.dbeta;
  else
    return nullptr;
}

// A backward call without memory for the gain row or the partial rows: the scalar reference rows
// with gamma in its own type (dx, and the partials of a partial call), then for a folded call the
// column-tiled fold -- the same bits, one more read of dy and x.
template <class Op, class Knobs, class T, class W>
void backward_without_scratch(const typename Op::template args<T>& a, const W* gamma, bool partial) {
  const float* mean = nullptr;
  float* dbeta = nullptr;
  if constexpr (Op::centered)
    mean = a.mean, dbeta = a.dbeta;
  normkit::reference::backward_rows<Knobs, Op>(a.dy, a.x, gamma, a.rstd, mean, a.dx,
                                               partial ? a.dgamma : nullptr, partial ? dbeta : nullptr,
                                               a.rows, a.cols, a.dy_stride, a.x_stride, a.dx_stride);
  if (partial)
    return;
  float* const dgamma = a.dgamma;
  const std::size_t blocks = grad_blocks(a.rows);
  for (std::size_t c0 = 0; c0 < a.cols; c0 += grad_tile) {
    const std::size_t nc = min_of(grad_tile, a.cols - c0);
    float gs[66 * grad_tile], bs[66 * grad_tile];
    grad_tree tg{gs, nc}, tb{bs, nc};
    for (std::size_t k = 0; k < blocks; ++k) {
      const std::size_t r0 = k * grad_block_rows, n = min_of(grad_block_rows, a.rows - r0);
      normkit::reference::grad_block_columns<Op>(
          a.dy + r0 * a.dy_stride, a.x + r0 * a.x_stride, a.rstd + r0, mean ? mean + r0 : nullptr, n, a.cols,
          c0, nc, a.dy_stride, a.x_stride, dgamma ? tg.next() : nullptr, dbeta ? tb.next() : nullptr);
      if (dgamma)
        tg.push();
      if (dbeta)
        tb.push();
    }
    if (dgamma)
      std::memcpy(dgamma + c0, tg.finish(), nc * sizeof(float));
    if (dbeta)
      std::memcpy(dbeta + c0, tb.finish(), nc * sizeof(float));
  }
}

// A backward call (Ref: on the reference path). Partial: the parameter gradients are the caller's
// grad_blocks(rows) x cols block partials, written by one op call; otherwise they are 1 x cols,
// and the op runs block by block into partial rows folded in the contract's tree as they come.
// Validation first (gamma in its own type); zero rows give dgamma = dbeta = +0 (the sum of
// nothing) in a folded call; zero columns touch nothing. The kernels read gamma as an fp32 gain
// row with the policy's offset added (gain_row), made here.
template <class Op, class Policy, bool Ref, class T, class W>
status backward_call(typename Op::template args<T> a, const W* gamma, bool partial) {
  using Knobs = gain_only<knobs_of<Policy>>;
  if (const status st =
          Op::check(a, partial ? grad_blocks(a.rows) : 1, operand_of(gamma, 1, a.cols, a.cols, true));
      st != status::ok || a.cols == 0)
    return st;
  float* const dgamma = a.dgamma;
  float* const dbeta = dbeta_of<Op>(a);
  if (a.rows == 0) {
    if (!partial)
      for (float* o : {dgamma, dbeta})
        if (o)
          for (std::size_t i = 0; i < a.cols; ++i)
            o[i] = 0.0f;
    return status::ok;
  }
  const bool fold = !partial && (dgamma || dbeta);
  const std::size_t blocks = grad_blocks(a.rows), depth = fold ? grad_tree::depth(blocks) : 0;
  const std::size_t n_out = (dgamma ? 1 : 0) + (dbeta ? 1 : 0);
  const std::size_t work = Ref ? 0 : grad_work_floats<T>(a.cols);
  const std::size_t floats = ((gamma ? 1 : 0) + (fold ? n_out * depth : 0)) * a.cols + work;
  const std::unique_ptr<float[]> scratch(floats ? new (std::nothrow) float[floats] : nullptr);
  if (floats && !scratch) {
    backward_without_scratch<Op, Knobs>(a, gamma, partial);
    return status::ok;
  }
  float* rest = scratch.get();
  a.work = work ? rest : nullptr;
  rest += work;
  a.far_inputs = prefetches(a.rows * a.cols * 2 * sizeof(T), a.cols * sizeof(T));
  a.group_rows = a.far_inputs ? 2 : grad_group_rows();  // from DRAM four measured no faster
  a.gain = nullptr;
  if (gamma) {
    gain_row<Knobs>(gamma, rest, a.cols);
    a.gain = rest;
    rest += a.cols;
  }
  if (!fold) {
    run_path<Op, Policy, Ref, T>(a);
    return status::ok;
  }
  grad_tree tg{rest, a.cols}, tb{rest + (dgamma ? depth * a.cols : 0), a.cols};
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::size_t r0 = k * grad_block_rows;
    typename Op::template args<T> b = block_args<Op>(a, r0, min_of(grad_block_rows, a.rows - r0));
    b.rows_after = a.rows - r0 - b.rows;
    b.dgamma = dgamma ? tg.next() : nullptr;
    if constexpr (Op::centered)
      b.dbeta = dbeta ? tb.next() : nullptr;
    run_path<Op, Policy, Ref, T>(b);
    if (dgamma)
      tg.push();
    if (dbeta)
      tb.push();
  }
  if (dgamma)
    std::memcpy(dgamma, tg.finish(), a.cols * sizeof(float));
  if (dbeta)
    std::memcpy(dbeta, tb.finish(), a.cols * sizeof(float));
  return status::ok;
}

// Rows per chunk of a forward variant: the statistics pass leaves them in L2 for the norm pass.
constexpr std::size_t fwd_chunk_bytes = std::size_t(256) << 10;

// A forward variant: the checks of the plain op plus the statistics' buffers, then per chunk of
// rows the statistics (norm_stats_op) and the plain norm (Norm), in that order (y may be x).
template <class Norm, class Policy, bool Ref, class In, class W, class Out>
status forward_with_stats(const typename Norm::template args<In, W, Out>& a, float* mean, float* rstd) {
  if (const status st = check_norm_scalars(a.eps, a.cols, a.x_stride, a.y_stride); st != status::ok)
    return st;
  if (a.rows == 0 || a.cols == 0)
    return status::ok;
  const W* beta = nullptr;
  if constexpr (std::is_same<Norm, layer_norm_op>::value)
    beta = a.beta;
  const operand in[] = {operand_of(a.x, a.rows, a.cols, a.x_stride),
                        operand_of(a.gamma, 1, a.cols, a.cols, true),
                        operand_of(beta, 1, a.cols, a.cols, true)};
  const operand out[] = {operand_of(a.y, a.rows, a.cols, a.y_stride), operand_of(rstd, 1, a.rows, a.rows),
                         operand_of(mean, 1, a.rows, a.rows, !std::is_same<Norm, layer_norm_op>::value)};
  if (const status st = check_operands(in, out, {0, -1, -1}); st != status::ok)
    return st;
  const std::size_t chunk = max_of<std::size_t>(1, fwd_chunk_bytes / (a.cols * sizeof(In)));
  for (std::size_t r0 = 0; r0 < a.rows; r0 += chunk) {
    const std::size_t n = min_of(chunk, a.rows - r0);
    run_path<norm_stats_op, Policy, Ref, In>(
        {a.x + r0 * a.x_stride, rstd + r0, mean ? mean + r0 : nullptr, n, a.cols, a.eps, a.x_stride});
    typename Norm::template args<In, W, Out> c = a;
    c.x = a.x + r0 * a.x_stride;
    c.y = a.y + r0 * a.y_stride;
    c.rows = n;
    run_path<Norm, Policy, Ref, In, W, Out>(c);
  }
  return status::ok;
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
