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
    const B rs(rstd[r]), mb(Centered ? mean[r] : 0.0f);
    // contract: t_i = f(dy_i) * g_i; n_i = f(x_i) * rstd, or (f(x_i) - mean) * rstd.
    auto terms = [&](std::size_t i, B& ta, B& tb, B& na, B& nb) NORMKIT_LAMBDA_ALWAYS_INLINE {
      B ya, yb, xa, xb, ga, gb;
      chunk_io<T, Arch, false>::load(dyr + i, ya, yb);
      chunk_io<T, Arch, false>::load(xr + i, xa, xb);
      chunk_io<W, Arch, false>::load(gp + i * g_step, ga, gb);
      ta = ya * gain_value<Knobs>(ga);
      tb = yb * gain_value<Knobs>(gb);
      if constexpr (Centered) {
        na = (xa - mb) * rs;
        nb = (xb - mb) * rs;
      } else {
        na = xa * rs;
        nb = xb * rs;
      }
    };
    auto terms_partial = [&](std::size_t i, std::size_t n, B& ta, B& tb, B& na, B& nb) {
      B ya, yb, xa, xb, ga, gb;
      load_chunk_partial<Arch, false>(dyr + i, n, ya, yb);
      load_chunk_partial<Arch, false>(xr + i, n, xa, xb);
      load_chunk_partial<Arch, false>(gp + i * g_step, n, ga, gb);
      ta = ya * gain_value<Knobs>(ga);
      tb = yb * gain_value<Knobs>(gb);
      if constexpr (Centered) {
        na = (xa - mb) * rs;
        nb = (xb - mb) * rs;
      } else {
        na = xa * rs;
        nb = xb * rs;
      }
    };

    // Pass 1. contract: b = csum(t_i * n_i) / d (fma into partials), a = csum(t_i) / d; the
    // padding lanes of the tail add exact zeros whatever rstd is (t and n both selected to 0).
    B p[A], q[A];
    zero_all(p, std::make_index_sequence<A>{});
    zero_all(q, std::make_index_sequence<A>{});
    std::size_t i = 0;
    for (; i + canonical_lanes <= cols; i += canonical_lanes) {
#pragma GCC unroll 8
      for (std::size_t j = 0; j < A; j += 2) {
        B ta, tb, na, nb;
        terms(i + j / 2 * W2, ta, tb, na, nb);
        p[j] = arch_impl::fma<Arch>(ta, na, p[j]);
        p[j + 1] = arch_impl::fma<Arch>(tb, nb, p[j + 1]);
        if constexpr (Centered) {
          q[j] = q[j] + ta;
          q[j + 1] = q[j + 1] + tb;
        }
      }
    }
#pragma GCC unroll 8
    for (std::size_t j = 0; j < A; j += 2, i += W2) {
      if (i >= cols)
        continue;
      B ta, tb, na, nb;
      if (i + W2 <= cols) {
        terms(i, ta, tb, na, nb);
      } else {
        terms_partial(i, cols - i, ta, tb, na, nb);
        const M ka = chunk_lanes_below<Arch, false>(0, cols - i),
                kb = chunk_lanes_below<Arch, false>(1, cols - i);
        const B zero(0.0f);
        ta = xsimd::select(ka, ta, zero);
        tb = xsimd::select(kb, tb, zero);
        na = xsimd::select(ka, na, zero);
        nb = xsimd::select(kb, nb, zero);
      }
      p[j] = arch_impl::fma<Arch>(ta, na, p[j]);
      p[j + 1] = arch_impl::fma<Arch>(tb, nb, p[j + 1]);
      if constexpr (Centered) {
        q[j] = q[j] + ta;
        q[j + 1] = q[j + 1] + tb;
      }
    }
    const B bb(fold<Arch, false>(p) / d);
    const B ab(Centered ? fold<Arch, false>(q) / d : 0.0f);

    // Pass 2. contract: dx_i = T(fma(-n_i, b, t_i - a) * rstd) (RMSNorm: t_i); dgamma partial
    // p = fma(f(dy_i), n_i, p); dbeta partial q = q + f(dy_i). NaN dx: canonical.
    auto out = [&](B ta, B tb, B na, B nb, B& va, B& vb) NORMKIT_LAMBDA_ALWAYS_INLINE {
      const B ua = Centered ? B(ta - ab) : ta, ub = Centered ? B(tb - ab) : tb;
      va = arch_impl::fma<Arch>(-na, bb, ua) * rs;
      vb = arch_impl::fma<Arch>(-nb, bb, ub) * rs;
    };
    i = 0;
    for (; i + W2 <= cols; i += W2) {
      B ta, tb, na, nb, va, vb;
      terms(i, ta, tb, na, nb);
      out(ta, tb, na, nb, va, vb);
      chunk_io<T, Arch, false>::template store<false, false>(dxr + i, va, vb);
      if (pg || pb) {
        B ya, yb;
        chunk_io<T, Arch, false>::load(dyr + i, ya, yb);
        if (pg) {
          B sa, sb;
          chunk_io<float, Arch, false>::load(pg + i, sa, sb);
          chunk_io<float, Arch, false>::template store<true, false>(pg + i, arch_impl::fma<Arch>(ya, na, sa),
                                                                    arch_impl::fma<Arch>(yb, nb, sb));
        }
        if (pb) {
          B sa, sb;
          chunk_io<float, Arch, false>::load(pb + i, sa, sb);
          chunk_io<float, Arch, false>::template store<true, false>(pb + i, sa + ya, sb + yb);
        }
      }
    }
    if (i < cols) {
      const std::size_t n = cols - i;
      B ta, tb, na, nb, va, vb;
      terms_partial(i, n, ta, tb, na, nb);
      out(ta, tb, na, nb, va, vb);
      T buf[W2];
      chunk_io<T, Arch, false>::template store<false, false>(buf, va, vb);
      copy_short<W2>(dxr + i, buf, n);
      if (pg || pb) {
        B ya, yb;
        load_chunk_partial<Arch, false>(dyr + i, n, ya, yb);
        float fbuf[W2];
        if (pg) {
          B sa, sb;
          load_chunk_partial<Arch, false>(pg + i, n, sa, sb);
          chunk_io<float, Arch, false>::template store<true, false>(fbuf, arch_impl::fma<Arch>(ya, na, sa),
                                                                    arch_impl::fma<Arch>(yb, nb, sb));
          copy_short<W2>(pg + i, fbuf, n);
        }
        if (pb) {
          B sa, sb;
          load_chunk_partial<Arch, false>(pb + i, n, sa, sb);
          chunk_io<float, Arch, false>::template store<true, false>(fbuf, sa + ya, sb + yb);
          copy_short<W2>(pb + i, fbuf, n);
        }
      }
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
