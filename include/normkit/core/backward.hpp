// SPDX-License-Identifier: MIT
// normkit: the backward pass's arithmetic written once in scalar code -- THE definition of its
// bits (docs/contract.md, "Backward"): one row's dx and its contribution to the block partials of
// dgamma / dbeta, and the fixed tree that folds block partials. The SIMD rows
// (simd/backward_rows.hpp) must return exactly these bits.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "abi.hpp"
#include "canonical_sum.hpp"
#include "epilogue.hpp"
#include "math.hpp"
#include "op.hpp"  // interleaved_layout: the kernels' rule, which this size must follow
#include "policy.hpp"
#include "storage.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// contract: rows are cut into blocks of 64, counted from the call's first row. Fixed forever once
// gradients are compared across versions: changing it changes the bits of dgamma and dbeta.
constexpr std::size_t grad_block_rows = 64;

constexpr std::size_t grad_blocks(std::size_t rows) {
  return rows / grad_block_rows + (rows % grad_block_rows != 0);
}

// The scratch of the interleaved (bf16) backward kernels, which keep the gain row and a block's dgamma and
// dbeta partials in their interleaved chunk layout (simd/backward_rows.hpp): three rows padded
// to whole chunks of any ISA (a canonical block holds whole chunks of each). Other types: none.
template <class T>
constexpr std::size_t grad_work_floats(std::size_t cols) {
  return interleaved_layout<T, T, T> ? 3 * ((cols + canonical_lanes - 1) / canonical_lanes * canonical_lanes)
                                     : 0;
}

// The knobs that change the gradient: only the gain offset (contract: the roundings are treated as
// the identity, divide computes the same function as multiply).
template <class Knobs>
using gain_only = policy<rounding::once, Knobs::gain>;

// contract: g_i = f(gamma_i), or 1.0f + f(gamma_i) with the gain offset: the fp32 gain row the
// backward kernels read (one IEEE add, the same bits as the forward's gain).
template <class Knobs, class W>
void gain_row(const W* gamma, float* g, std::size_t cols) {
  for (std::size_t i = 0; i < cols; ++i)
    g[i] = gain_value<Knobs>(to_float(gamma[i]));
}

// contract: a NaN partial or result is the canonical quiet NaN (x86 and Arm propagate different
// payloads through fma and add).
template <class Tag>
void canonicalize_nans(float* p, std::size_t n) {
  const float nan = bits_float(storage_traits<float>::canonical_nan);
  for (std::size_t i = 0; i < n; ++i)
    p[i] = p[i] != p[i] ? nan : p[i];
}

// contract: a tree node is left + right, per column (left: the earlier blocks).
template <class Tag>
void add_rows(float* left, const float* right, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    left[i] = left[i] + right[i];
}

// contract: T([0, N)) = T([0, P)) + T([P, N)), P the largest power of two below N. Evaluated as a
// binary counter: block partials are pushed in order, two subtrees of equal size merge at once,
// and what is left at the end merges from the top down (the later blocks are the right operand).
// slots: `depth` rows of n floats; size[k] is the block count of the subtree in slot k.
struct grad_tree {
  float* slots;
  std::size_t n;
  std::size_t used = 0;
  std::size_t size[64] = {};

  // Enough slots for `blocks` block partials: one per binary digit, plus one being filled.
  static constexpr std::size_t depth(std::size_t blocks) {
    std::size_t d = 1;
    for (; blocks > 1; blocks /= 2)
      ++d;
    return d + 1;
  }
  float* next() { return slots + used * n; }  // where the next block partial goes
  void push() {
    size[used++] = 1;
    while (used >= 2 && size[used - 1] == size[used - 2]) {
      add_rows<scalar_tag>(slots + (used - 2) * n, slots + (used - 1) * n, n);
      size[used - 2] *= 2;
      --used;
    }
  }
  // The root, in slot 0 (NaN canonical); +0 everywhere when no block was pushed.
  float* finish() {
    for (; used >= 2; --used)
      add_rows<scalar_tag>(slots + (used - 2) * n, slots + (used - 1) * n, n);
    if (used == 0)
      for (std::size_t i = 0; i < n; ++i)
        slots[i] = 0.0f;
    canonicalize_nans<scalar_tag>(slots, n);
    return slots;
  }
};

// contract (LayerNorm backward): what a row is centred on -- n_i = ((f(x_i) - K) - m) * rstd.
struct centring {
  float shift;  // K
  float mean;   // m
};

}  // namespace detail

namespace reference {

// contract (LayerNorm backward, a saved mean the forward did not produce): K = the saved mean,
// m = csum(f(x_i) - K) / float(d) -- what is left of the row's mean after K, so that
// (f(x_i) - K) - m is as accurate as the forward's centred value even where the saved mean was
// rounded at the scale of a large mean.
template <class T>
detail::centring recentred(const T* x, std::size_t cols, float mean) {
  float p[detail::canonical_lanes] = {};
  for (std::size_t i = 0; i < cols; ++i)
    p[i % detail::canonical_lanes] = p[i % detail::canonical_lanes] + (to_float(x[i]) - mean);
  return {mean,
          detail::fold_halves<detail::scalar_tag, detail::canonical_lanes>(p) / static_cast<float>(cols)};
}

// One row of the backward pass (docs/contract.md, "Backward"); Centered: LayerNorm, centred on c.
//   n_i = f(x_i) * rstd  or  ((f(x_i) - K) - m) * rstd;
//   t_i = f(dy_i) * g_i;
//   b = csum(t_i * n_i) / d;  a = csum(t_i) / d (LayerNorm), both with fma into the partials;
//   dx_i = T(fma(-n_i, b, u_i) * rstd), u_i = fma(f(dy_i), g_i, -a) (LayerNorm) or t_i;
//   pg_i = fma(f(dy_i), n_i, pg_i);  pb_i = pb_i + f(dy_i).
// pg / pb (the block partials) may be null.
template <class Knobs, bool Centered, class T, class W>
void backward_row(const T* dy, const T* x, const W* gamma, float rstd, detail::centring c, T* dx, float* pg,
                  float* pb, std::size_t cols) {
  constexpr std::size_t K = detail::canonical_lanes;
  auto normalized = [&](std::size_t i) {
    if constexpr (Centered)
      return ((to_float(x[i]) - c.shift) - c.mean) * rstd;  // contract: n_i = ((f(x_i) - K) - m) * rstd
    else
      return to_float(x[i]) * rstd;  // contract: n_i = f(x_i) * rstd
  };
  // contract: t_i = f(dy_i) * g_i; g_i = f(gamma_i), 1 + f(gamma_i) (offset), 1 without gamma.
  auto gain = [&](std::size_t i) { return gamma ? detail::gain_value<Knobs>(to_float(gamma[i])) : 1.0f; };
  float p[K] = {}, q[K] = {};
  for (std::size_t i = 0; i < cols; ++i) {
    const float y = to_float(dy[i]), g = gain(i), t = y * g, n = normalized(i);
    p[i % K] = detail::fma_f32(t, n, p[i % K]);  // contract: csum(t_i * n_i), p = fma(t_i, n_i, p)
    if constexpr (Centered)
      q[i % K] = detail::fma_f32(y, g, q[i % K]);  // contract: csum(t_i), p = fma(f(dy_i), g_i, p)
  }
  const float d = static_cast<float>(cols);
  const float neg_b = -(detail::fold_halves<detail::scalar_tag, K>(p) / d);
  const float neg_a = Centered ? -(detail::fold_halves<detail::scalar_tag, K>(q) / d) : 0.0f;
  const float nan = detail::bits_float(storage_traits<float>::canonical_nan);
  for (std::size_t i = 0; i < cols; ++i) {
    const float y = to_float(dy[i]), g = gain(i), n = normalized(i);
    // contract: dx_i = T(fma(-n_i, b, fma(f(dy_i), g_i, -a)) * rstd)   (RMSNorm: t_i inside)
    const float u = Centered ? detail::fma_f32(y, g, neg_a) : y * g;
    const float v = detail::fma_f32(n, neg_b, u) * rstd;  // fma(-n, b, u): the same bits
    if (pg)  // contract: dgamma partial p = fma(f(dy), n, p); read before dx is stored (dx may be dy)
      pg[i] = detail::fma_f32(y, n, pg[i]);
    if (pb)  // contract: dbeta partial q = q + f(dy)
      pb[i] = pb[i] + y;
    dx[i] = from_float<T>(v != v ? nan : v);
  }
}

// Row r's centring: the op's (LayerNorm), none for RMSNorm.
template <class Op, class T>
detail::centring centring_of(const T* x_row, std::size_t cols, const float* mean, std::size_t r) {
  if constexpr (Op::centered)
    return Op::centre(x_row, cols, mean[r]);
  else
    return {0.0f, 0.0f};
}

// A whole backward call's rows with its block partials (blocks of grad_block_rows from row 0):
// what the backward ops' references run. Op: the backward op (Op::centered; a centred op's
// Op::centre(x_row, cols, saved_mean) gives a row's centring, ops/layer_norm_backward.hpp).
template <class Knobs, class Op, class T, class W>
void backward_rows(const T* dy, const T* x, const W* gamma, const float* rstd, const float* mean, T* dx,
                   float* dgamma, float* dbeta, std::size_t rows, std::size_t cols, std::size_t dy_stride,
                   std::size_t x_stride, std::size_t dx_stride) {
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t k = r / detail::grad_block_rows;
    float* pg = dgamma ? dgamma + k * cols : nullptr;
    float* pb = dbeta ? dbeta + k * cols : nullptr;
    if (r % detail::grad_block_rows == 0)  // contract: a block partial starts at +0
      for (std::size_t i = 0; i < cols; ++i) {
        if (pg)
          pg[i] = 0.0f;
        if (pb)
          pb[i] = 0.0f;
      }
    const T* const xr = x + r * x_stride;
    backward_row<Knobs, Op::centered>(dy + r * dy_stride, xr, gamma, rstd[r],
                                      centring_of<Op>(xr, cols, mean, r), dx + r * dx_stride, pg, pb, cols);
    if (r % detail::grad_block_rows == detail::grad_block_rows - 1 || r + 1 == rows) {
      if (pg)
        detail::canonicalize_nans<detail::scalar_tag>(pg, cols);
      if (pb)
        detail::canonicalize_nans<detail::scalar_tag>(pb, cols);
    }
  }
}

// The block partials of columns [c0, c0 + nc) of one block of `rows` rows, column by column in
// the contract's order (+0, then the rows in order, NaN canonical): the bits the row kernels give
// the same columns. For a call that could not get memory for whole partial rows (dispatch/
// backward_call.hpp); pg or pb may be null.
template <class Op, class T>
void grad_block_columns(const T* dy, const T* x, const float* rstd, const float* mean, std::size_t rows,
                        std::size_t cols, std::size_t c0, std::size_t nc, std::size_t dy_stride,
                        std::size_t x_stride, float* pg, float* pb) {
  for (std::size_t i = 0; i < nc; ++i) {
    if (pg)
      pg[i] = 0.0f;
    if (pb)
      pb[i] = 0.0f;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    // The whole row's centring for a tile of its columns: slow, and only taken without memory.
    const detail::centring c = centring_of<Op>(x + r * x_stride, cols, mean, r);
    for (std::size_t i = 0; i < nc; ++i) {
      const float g = to_float(dy[r * dy_stride + c0 + i]), v = to_float(x[r * x_stride + c0 + i]);
      const float n = Op::centered ? ((v - c.shift) - c.mean) * rstd[r] : v * rstd[r];
      if (pg)
        pg[i] = detail::fma_f32(g, n, pg[i]);
      if (pb)
        pb[i] = pb[i] + g;
    }
  }
  if (pg)
    detail::canonicalize_nans<detail::scalar_tag>(pg, nc);
  if (pb)
    detail::canonicalize_nans<detail::scalar_tag>(pb, nc);
}

}  // namespace reference
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
