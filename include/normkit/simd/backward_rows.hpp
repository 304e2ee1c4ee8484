// SPDX-License-Identifier: MIT
// normkit: the backward pass's SIMD rows, templated on the xsimd arch, for both norms (Centered:
// LayerNorm). Per row: one pass for the canonical sums (b = csum(t n), LayerNorm also a = csum(t)),
// one pass that writes dx and adds the row into its block's dgamma / dbeta partials. The
// reference is core/backward.hpp; every step quotes the contract line it implements
// (docs/contract.md, "Backward"). Chunks use the split layout for every type (the float partials
// have no interleaved form), and the 64 canonical partials live in 64 / lanes registers per sum.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/backward.hpp"
#include "../core/canonical_sum.hpp"
#include "../core/epilogue.hpp"
#include "../core/storage.hpp"
#include "chunk.hpp"
#include "diagnostics.hpp"
#include "io.hpp"
#include "rows.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <class Arch, class Knobs, bool Centered, class T, class W>
void backward_simd_rows(const T* dy, const T* x, const W* gamma, const float* rstd, const float* mean, T* dx,
                        float* dgamma, float* dbeta, std::size_t rows, std::size_t cols,
                        std::size_t dy_stride, std::size_t x_stride, std::size_t dx_stride) {
  using B = typename shape<Arch>::batch;
  using M = xsimd::batch_bool<float, Arch>;
  using table = neutral_table<W>;
  constexpr std::size_t A = shape<Arch>::accumulators, W2 = 2 * shape<Arch>::width;
  // A null gamma reads neutral gains with step 0 (g = 1; the offset's 1 + 0).
  const std::size_t g_step = gamma ? 1 : 0;
  const W* const gp =
      gamma ? gamma : neutral_values<Arch, W>(Knobs::gain == gain_mode::plus_one ? table::zero : table::one);
  const float d = static_cast<float>(cols);

  for (std::size_t r = 0; r < rows; ++r) {
    const T* const dyr = dy + r * dy_stride;
    const T* const xr = x + r * x_stride;
    T* const dxr = dx + r * dx_stride;
    const std::size_t k = r / grad_block_rows;
    float* const pg = dgamma ? dgamma + k * cols : nullptr;
    float* const pb = dbeta ? dbeta + k * cols : nullptr;
    if (r % grad_block_rows == 0)  // contract: a block partial starts at +0
      for (std::size_t i = 0; i < cols; ++i) {
        if (pg)
          pg[i] = 0.0f;
        if (pb)
          pb[i] = 0.0f;
      }
    const B rs(rstd[r]), shift(Centered ? mean[r] : 0.0f);
    // contract (LayerNorm): K = mean; m = csum(f(x_i) - K) / float(d), padding lanes add 0.
    B mb(0.0f);
    if constexpr (Centered)
      mb = B(canonical_sum<Arch, false>(plain_source<Arch, false, T>{xr, nullptr}, cols,
                                        [&](B acc, B v, const M* keep) {
                                          const B di = v - shift;
                                          return acc + (keep ? xsimd::select(*keep, di, B(0.0f)) : di);
                                        }) /
             d);
    // One chunk's values: f(dy), g, t = f(dy) * g and n, each for registers a and b.
    // contract: t_i = f(dy_i) * g_i; n_i = f(x_i) * rstd, or ((f(x_i) - K) - m) * rstd.
    struct values {
      B y[2], g[2], t[2], n[2];
    };
    auto finish = [&](values& v, B xa, B xb) NORMKIT_LAMBDA_ALWAYS_INLINE {
      const B xs[2] = {xa, xb};
      for (int h = 0; h < 2; ++h) {
        v.g[h] = gain_value<Knobs>(v.g[h]);
        v.t[h] = v.y[h] * v.g[h];
        if constexpr (Centered)
          v.n[h] = ((xs[h] - shift) - mb) * rs;
        else
          v.n[h] = xs[h] * rs;
      }
    };
    auto load = [&](std::size_t i, values& v) NORMKIT_LAMBDA_ALWAYS_INLINE {
      B xa, xb;
      chunk_io<T, Arch, false>::load(dyr + i, v.y[0], v.y[1]);
      chunk_io<T, Arch, false>::load(xr + i, xa, xb);
      chunk_io<W, Arch, false>::load(gp + i * g_step, v.g[0], v.g[1]);
      finish(v, xa, xb);
    };
    auto load_partial = [&](std::size_t i, std::size_t n, values& v) {
      B xa, xb;
      load_chunk_partial<Arch, false>(dyr + i, n, v.y[0], v.y[1]);
      load_chunk_partial<Arch, false>(xr + i, n, xa, xb);
      load_chunk_partial<Arch, false>(gp + i * g_step, n, v.g[0], v.g[1]);
      finish(v, xa, xb);
    };

    // Pass 1. contract: b = csum(t_i * n_i) / d, p = fma(t_i, n_i, p); a = csum(t_i) / d with
    // p = fma(f(dy_i), g_i, p) (LayerNorm); the padding lanes of the tail add exact zeros whatever
    // rstd is (their values selected to 0).
    B p[A], q[A];
    zero_all(p, std::make_index_sequence<A>{});
    zero_all(q, std::make_index_sequence<A>{});
    auto accumulate = [&](std::size_t j, const values& v) NORMKIT_LAMBDA_ALWAYS_INLINE {
      for (std::size_t h = 0; h < 2; ++h) {
        p[j + h] = arch_impl::fma<Arch>(v.t[h], v.n[h], p[j + h]);
        if constexpr (Centered)
          q[j + h] = arch_impl::fma<Arch>(v.y[h], v.g[h], q[j + h]);
      }
    };
    std::size_t i = 0;
    for (; i + canonical_lanes <= cols; i += canonical_lanes) {
#pragma GCC unroll 8
      for (std::size_t j = 0; j < A; j += 2) {
        values v;
        load(i + j / 2 * W2, v);
        accumulate(j, v);
      }
    }
#pragma GCC unroll 8
    for (std::size_t j = 0; j < A; j += 2, i += W2) {
      if (i >= cols)
        continue;
      values v;
      if (i + W2 <= cols) {
        load(i, v);
      } else {
        load_partial(i, cols - i, v);
        const B zero(0.0f);
        for (std::size_t h = 0; h < 2; ++h) {
          const M keep = chunk_lanes_below<Arch, false>(h, cols - i);
          v.y[h] = xsimd::select(keep, v.y[h], zero);
          v.g[h] = xsimd::select(keep, v.g[h], zero);
          v.t[h] = xsimd::select(keep, v.t[h], zero);
          v.n[h] = xsimd::select(keep, v.n[h], zero);
        }
      }
      accumulate(j, v);
    }
    // -b as a float: xsimd's unary minus on a batch is not a sign flip on every arch (0 - x turns -0
    // into +0), and fma(n, -b, u) == fma(-n, b, u) bit for bit, signed zeros included.
    const B neg_b(-(fold<Arch, false>(p) / d));
    const B neg_a(Centered ? -(fold<Arch, false>(q) / d) : 0.0f);

    // Pass 2. contract: dx_i = T(fma(-n_i, b, fma(f(dy_i), g_i, -a)) * rstd) (RMSNorm: t_i in
    // place of the inner fma); dgamma partial p = fma(f(dy_i), n_i, p); dbeta partial
    // q = q + f(dy_i). NaN dx: canonical. The partials read dy before dx is stored (dx may be dy).
    auto out = [&](const values& v, B& da, B& db) NORMKIT_LAMBDA_ALWAYS_INLINE {
      B r2[2];
      for (int h = 0; h < 2; ++h) {
        const B u = Centered ? arch_impl::fma<Arch>(v.y[h], v.g[h], neg_a) : v.t[h];
        r2[h] = arch_impl::fma<Arch>(v.n[h], neg_b, u) * rs;
      }
      da = r2[0];
      db = r2[1];
    };
    auto partials = [&](const values& v, float* g_at, float* b_at, bool whole, std::size_t n) {
      float fbuf[W2];
      if (g_at) {
        B sa, sb;
        if (whole)
          chunk_io<float, Arch, false>::load(g_at, sa, sb);
        else
          load_chunk_partial<Arch, false>(g_at, n, sa, sb);
        chunk_io<float, Arch, false>::template store<true, false>(whole ? g_at : fbuf,
                                                                  arch_impl::fma<Arch>(v.y[0], v.n[0], sa),
                                                                  arch_impl::fma<Arch>(v.y[1], v.n[1], sb));
        if (!whole)
          copy_short<W2>(g_at, fbuf, n);
      }
      if (b_at) {
        B sa, sb;
        if (whole)
          chunk_io<float, Arch, false>::load(b_at, sa, sb);
        else
          load_chunk_partial<Arch, false>(b_at, n, sa, sb);
        chunk_io<float, Arch, false>::template store<true, false>(whole ? b_at : fbuf, sa + v.y[0],
                                                                  sb + v.y[1]);
        if (!whole)
          copy_short<W2>(b_at, fbuf, n);
      }
    };
    i = 0;
    for (; i + W2 <= cols; i += W2) {
      values v;
      B da, db;
      load(i, v);
      out(v, da, db);
      if (pg || pb)
        partials(v, pg ? pg + i : nullptr, pb ? pb + i : nullptr, true, W2);
      chunk_io<T, Arch, false>::template store<false, false>(dxr + i, da, db);
    }
    if (i < cols) {
      const std::size_t n = cols - i;
      values v;
      B da, db;
      load_partial(i, n, v);
      out(v, da, db);
      if (pg || pb)
        partials(v, pg ? pg + i : nullptr, pb ? pb + i : nullptr, false, n);
      T buf[W2];
      chunk_io<T, Arch, false>::template store<false, false>(buf, da, db);
      copy_short<W2>(dxr + i, buf, n);
    }
    // contract: a NaN block partial is stored canonical, once the block's last row is in.
    if (r % grad_block_rows == grad_block_rows - 1 || r + 1 == rows) {
      if (pg)
        canonicalize_nans<Arch>(pg, cols);
      if (pb)
        canonicalize_nans<Arch>(pb, cols);
    }
  }
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
