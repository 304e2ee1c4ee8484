// SPDX-License-Identifier: MIT
// normkit: the backward pass's SIMD rows, templated on the xsimd arch, for both norms (Centered:
// LayerNorm). Rows go in groups of up to two (or four) inside a 64-row block. Each row needs its statistics
// (LayerNorm: the forward's centring replayed, then b = csum(t n) and a = csum(t); RMSNorm: b)
// before one pass over the columns writes the group's dx and adds its rows, in row order, into
// the block's dgamma / dbeta partials held in registers -- one read and one write of the partials
// per group instead of per row, and the same fma sequence per column as the reference
// (core/backward.hpp), whose bits every step reproduces (docs/contract.md, "Backward"). The sums
// b and a of the next group are taken inside this output pass, a canonical block at a time
// behind its columns, so that their first reads of dy and x overlap its arithmetic. bf16 rows
// use the interleaved chunk layout (simd/chunk.hpp: one instruction per register to widen, not
// two), with the fp32 gains and the block partials in a scratch in that layout, chunk by chunk
// from column 0; the partials leave it in column order at the end of each block.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uintptr_t
#include <type_traits>  // std::integral_constant
#include <utility>      // std::pair

#include "../core/abi.hpp"
#include "../core/backward.hpp"
#include "../core/canonical_sum.hpp"
#include "../core/epilogue.hpp"
#include "../core/op.hpp"  // interleaved_layout
#include "../core/storage.hpp"
#include "../core/tuning.hpp"
#include "chunk.hpp"
#include "diagnostics.hpp"
#include "io.hpp"
#include "rows.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// Rows whose output pass runs together share one read and write of the block partials: two, or
// four where the caller asks (args.group_rows: dispatch/backward_call.hpp) on AVX-512. Four rows'
// pumped sums and values need its 32 registers, and only there were four measured faster (in
// cache, by 7-13 %: docs/performance.md). The group size never changes the bits (rows go into
// the partials in order either way).
template <class Arch>
constexpr bool has_wide_grad_groups = shape<Arch>::width >= 16;
// Far inputs: each output pass prefetches the dy and x rows of the group this many groups ahead
// into L2, for the statistics pass that reads them first (two measured a little faster than one;
// docs/performance.md). Prefetches change no bit.
constexpr std::size_t grad_prefetch_groups = 2;

// Row: the forward's SIMD row (ops/rms_norm_simd.hpp, ops/layer_norm_simd.hpp): whether rows are
// centred, and the statistics whose centring a LayerNorm row replays.
template <class Arch, class Row, std::size_t G, class T>
void backward_group_rows(const T* dy, const T* x, const float* gain, const float* rstd, const float* mean,
                         T* dx, float* dgamma, float* dbeta, std::size_t rows, std::size_t cols,
                         std::size_t dy_stride, std::size_t x_stride, std::size_t dx_stride, bool stream,
                         bool far_inputs, std::size_t rows_after, float* work) {
  using B = typename shape<Arch>::batch;
  using M = xsimd::batch_bool<float, Arch>;
  using table = neutral_table<float>;
  constexpr bool Centered = Row::centered;
  constexpr bool IL = interleaved_layout<T, T, T>;  // dy, x, dx bf16 (work: grad_work_floats)
  constexpr std::size_t A = shape<Arch>::accumulators, W2 = 2 * shape<Arch>::width;
  using inputs = chunk_io<T, Arch, IL>;
  using floats = chunk_io<float, Arch, false>;  // gains and partials: as stored (IL: the scratch)
  // Streaming stores need every row's dx to start at the same offset within a cache line, and
  // interleaved rows chunks from column 0 (the scratch's layout): those stream only lines whose
  // first element is a row's (engines' tensors are 64-byte aligned).
  stream = stream && (dx_stride * sizeof(T)) % cache_line == 0 &&
           (!IL || reinterpret_cast<std::uintptr_t>(dx) % cache_line == 0);
  const std::size_t head = stream ? min_of(cols, elements_to_line(dx, sizeof(T))) : 0;
  // g_i as fp32 (the policy's offset added by the caller); a null gain reads 1 with step 0. The
  // interleaved rows read the gains from the scratch, each chunk's even elements then its odd
  // ones (the tail chunk zero-padded), and keep the partials there.
  const std::size_t padded = (cols + W2 - 1) / W2 * W2;
  float* const wg = IL ? work + padded : nullptr;
  float* const wb = IL ? work + 2 * padded : nullptr;
  if (IL && gain) {
    for (std::size_t i = 0; i < padded; i += W2) {
      B a, b;
      if (i + W2 <= cols)
        floats::load(gain + i, a, b);
      else
        load_chunk_partial<Arch, false>(gain + i, cols - i, a, b);
      arch_impl::unzip2<Arch>(a, b);
      floats::template store<true, false>(work + i, a, b);
    }
  }
  const std::size_t g_step = gain ? 1 : 0;
  const float* const gp = gain ? (IL ? work : gain) : neutral_values<Arch, float>(table::one);
  const float d = static_cast<float>(cols);

  // One chunk's values of one row: f(dy), g, t = f(dy) * g and n, each for registers a and b.
  // contract: t_i = f(dy_i) * g_i; n_i = f(x_i) * rstd, or ((f(x_i) - K) - m) * rstd.
  struct values {
    B y[2], g[2], t[2], n[2], c[2];  // c: the centred value (LayerNorm)
  };
  // speculative: K and m (first_m) are the forward's first split (K = f(x_0)), to be confirmed by
  // the S the sums take alongside (centring_of); saved: the row's saved mean.
  struct row_scalars {
    B rs, shift, m, neg_b, neg_a;
    float saved, first_m;
    bool speculative;
  };
  auto finish = [](values& v, B xa, B xb, const row_scalars& s) NORMKIT_LAMBDA_ALWAYS_INLINE {
    const B xs[2] = {xa, xb};
    for (int h = 0; h < 2; ++h) {
      v.t[h] = v.y[h] * v.g[h];
      if constexpr (Centered) {
        v.c[h] = (xs[h] - s.shift) - s.m;
        v.n[h] = v.c[h] * s.rs;
      } else {
        v.n[h] = xs[h] * s.rs;
      }
    }
  };
  // gp and g_step by value: read through the closure, they were reloaded after every store.
  auto load = [gp, g_step, finish](const T* dyr, const T* xr, std::size_t i, const row_scalars& s, values& v)
                  NORMKIT_LAMBDA_ALWAYS_INLINE {
                    B xa, xb;
                    inputs::load(dyr + i, v.y[0], v.y[1]);
                    inputs::load(xr + i, xa, xb);
                    floats::load(gp + i * g_step, v.g[0], v.g[1]);
                    finish(v, xa, xb, s);
                  };
  auto load_partial = [gp, g_step, finish](const T* dyr, const T* xr, std::size_t i, std::size_t n,
                                           const row_scalars& s, values& v) {
    B xa, xb;
    load_chunk_partial<Arch, IL>(dyr + i, n, v.y[0], v.y[1]);
    load_chunk_partial<Arch, IL>(xr + i, n, xa, xb);
    if (IL)  // the scratch's chunk is whole (zero-padded)
      floats::load(gp + i * g_step, v.g[0], v.g[1]);
    else
      load_chunk_partial<Arch, false>(gp + i * g_step, n, v.g[0], v.g[1]);
    finish(v, xa, xb, s);
  };

  // The statistics of row r (dyr, xr: its rows of dy and x), in three steps, so that the next
  // group's can run inside this group's output pass (the pump, below): its centring (LayerNorm),
  // its sums over whole canonical blocks, from any block boundary on, and the rest of its columns
  // with the fold.
  // contract: b = csum(t_i * n_i) / d, p = fma(t_i, n_i, p); a = csum(t_i) / d with
  // p = fma(f(dy_i), g_i, p) (LayerNorm); the padding lanes of the tail add exact zeros whatever
  // rstd is (their values selected to 0). b and a are kept negated as floats: xsimd's unary minus
  // on a batch is not a sign flip on every arch (0 - x turns -0 into +0), and fma(n, -b, u) ==
  // fma(-n, b, u) bit for bit, signed zeros included.
  struct row_sums {
    B p[A], q[A], c2[A];  // c2: S = csum(c_i^2) of a speculative centring
  };
  // The centring of row r's mean pass alone: m = csum(f(x_i) - K) / d from K, the forward's first
  // sum at scale 1 (LayerNorm rows only).
  auto mean_from = [&](const T* xr, float shift) {
    if constexpr (Centered)
      return Row::template mean<Arch, IL>(plain_source<Arch, IL, T>{xr, {}}, cols, shift, 1.0f);
    else
      return 0.0f;
  };
  // contract: the forward's own centring (its statistics replayed at scale 1 and eps 0, Row::stats)
  // when the saved mean is its K + m, else K = the saved mean, m = csum(f(x_i) - K) / d.
  auto replayed = [&](row_scalars& s, const T* xr) {
    const plain_source<Arch, IL, T> src{xr, {}};
    const row_stats f = Row::template stats<Arch, IL>(src, cols, 0.0f);
    const bool own = !f.nan_row && f.scale == 1.0f && f.shift + f.mean == s.saved;
    s.shift = B(own ? f.shift : s.saved);
    s.m = B(own ? f.mean : mean_from(xr, s.saved));
    s.speculative = false;
  };
  // The replay's first pass gives K = f(x_0) and its m; the forward kept them unless S (its second
  // pass) made it rescale or refine. When K + m is the saved mean the row speculates on that split,
  // and its sums take S alongside (finish_sums confirms it, or replays the row): the replay's S
  // pass, a third read of x per row, measured 12 % of the LayerNorm backward (docs/performance.md).
  auto centring_of = [&](std::size_t r, const T* xr) {
    row_scalars s{B(rstd[r]), B(0.0f), B(0.0f), B(0.0f), B(0.0f), Centered ? mean[r] : 0.0f, 0.0f, false};
    if constexpr (Centered) {
      const float k = plain_source<Arch, IL, T>{xr, {}}.first(), m = mean_from(xr, k);
      if (k + m == s.saved) {
        s.shift = B(k);
        s.m = B(m);
        s.first_m = m;
        s.speculative = true;
      } else {
        replayed(s, xr);
      }
    }
    return s;
  };
  auto zero_sums = [](row_sums& u) NORMKIT_LAMBDA_ALWAYS_INLINE {
    zero_all(u.p, std::make_index_sequence<A>{});
    if constexpr (Centered) {
      zero_all(u.q, std::make_index_sequence<A>{});
      zero_all(u.c2, std::make_index_sequence<A>{});
    }
  };
  auto accumulate = [](row_sums& u, std::size_t j, const values& v) NORMKIT_LAMBDA_ALWAYS_INLINE {
    for (std::size_t h = 0; h < 2; ++h) {
      u.p[j + h] = arch_impl::fma<Arch>(v.t[h], v.n[h], u.p[j + h]);
      if constexpr (Centered) {
        u.q[j + h] = arch_impl::fma<Arch>(v.y[h], v.g[h], u.q[j + h]);
        u.c2[j + h] = arch_impl::fma<Arch>(v.c[h], v.c[h], u.c2[j + h]);
      }
    }
  };
  // The canonical block at i (a multiple of canonical_lanes, i + canonical_lanes <= cols).
  auto sum_block = [load, accumulate](row_sums& u, const T* dyr, const T* xr, std::size_t i,
                                      const row_scalars& s) NORMKIT_LAMBDA_ALWAYS_INLINE {
#pragma GCC unroll 8
    for (std::size_t j = 0; j < A; j += 2) {
      values v;
      load(dyr, xr, i + j / 2 * W2, s, v);
      accumulate(u, j, v);
    }
  };
  // The columns from i (a block boundary) on, then b and a into s.
  auto finish_sums = [&](row_sums& u, const T* dyr, const T* xr, std::size_t i, row_scalars& s) {
    for (;;) {
      for (; i + canonical_lanes <= cols; i += canonical_lanes)
        sum_block(u, dyr, xr, i, s);
#pragma GCC unroll 8
      for (std::size_t j = 0; j < A; j += 2, i += W2) {
        if (i >= cols)
          continue;
        values v;
        if (i + W2 <= cols) {
          load(dyr, xr, i, s, v);
        } else {
          load_partial(dyr, xr, i, cols - i, s, v);
          const B zero(0.0f);
          for (std::size_t h = 0; h < 2; ++h) {
            const M keep = chunk_lanes_below<Arch, IL>(h, cols - i);
            v.y[h] = xsimd::select(keep, v.y[h], zero);
            v.g[h] = xsimd::select(keep, v.g[h], zero);
            v.t[h] = xsimd::select(keep, v.t[h], zero);
            v.n[h] = xsimd::select(keep, v.n[h], zero);
            v.c[h] = xsimd::select(keep, v.c[h], zero);
          }
        }
        accumulate(u, j, v);
      }
      if constexpr (Centered) {
        // contract: the replay keeps its first split unless S makes it rescale (eps 0) or refine;
        // then the row is replayed and summed again.
        if (s.speculative) {
          const float sum = fold<Arch, IL>(u.c2);
          s.speculative = false;
          if (needs_rescale<Arch>(sum, d, 0.0f) || shift_is_outlier<Arch>(s.first_m, sum, d)) {
            replayed(s, xr);
            zero_sums(u);
            i = 0;
            continue;
          }
        }
      }
      break;
    }
    s.neg_b = B(-(fold<Arch, IL>(u.p) / d));
    if constexpr (Centered)
      s.neg_a = B(-(fold<Arch, IL>(u.q) / d));
  };
  auto row_stats_of = [&](std::size_t r, const T* dyr, const T* xr) {
    row_scalars s = centring_of(r, xr);
    row_sums u;
    zero_sums(u);
    finish_sums(u, dyr, xr, 0, s);
    return s;
  };

  // contract: dx_i = T(fma(-n_i, b, fma(f(dy_i), g_i, -a)) * rstd) (RMSNorm: t_i in place of the
  // inner fma); NaN dx canonical.
  auto out = [](const values& v, const row_scalars& s, B& da, B& db) NORMKIT_LAMBDA_ALWAYS_INLINE {
    B r2[2];
    for (int h = 0; h < 2; ++h) {
      const B u = Centered ? arch_impl::fma<Arch>(v.y[h], v.g[h], s.neg_a) : v.t[h];
      r2[h] = arch_impl::fma<Arch>(v.n[h], s.neg_b, u) * s.rs;
    }
    da = r2[0];
    db = r2[1];
  };

  // The statistics pass reads dy and x first: for far inputs, from L2 (grad_prefetch_groups).
  // Whether they are far is the whole call's (far_inputs), not these rows': a folded call runs one
  // 64-row block at a time, each below the threshold. The prefetches reach into the rows_after
  // rows that follow the block.
  const bool prefetch = far_inputs;
  // The rows of the group starting at r0: up to G, inside its 64-row block.
  auto group_rows = [rows](std::size_t r0) {
    return r0 < rows ? min_of(G, min_of(rows, (r0 / grad_block_rows + 1) * grad_block_rows) - r0)
                     : std::size_t(0);
  };
  row_scalars st[G];
  // The first group's statistics; every later group's run during the output pass before it.
  for (std::size_t g = 0; g < group_rows(0); ++g)
    st[g] = row_stats_of(g, dy + g * dy_stride, x + g * x_stride);
  for (std::size_t r0 = 0; r0 < rows;) {
    const std::size_t k = r0 / grad_block_rows;
    const std::size_t n_rows = group_rows(r0);
    float* const pg = dgamma ? (IL ? wg : dgamma + k * cols) : nullptr;  // where the pass keeps them
    float* const pb = dbeta ? (IL ? wb : dbeta + k * cols) : nullptr;
    const bool first = r0 % grad_block_rows == 0;  // contract: a block partial starts at +0
    const T* dyr[G];
    const T* xr[G];
    T* dxr[G];
    for (std::size_t g = 0; g < n_rows; ++g) {
      dyr[g] = dy + (r0 + g) * dy_stride;
      xr[g] = x + (r0 + g) * x_stride;
      dxr[g] = dx + (r0 + g) * dx_stride;
    }
    // The pump: the next group's sums, one canonical block of each of its rows whenever the
    // output pass has passed the block's end, so that their first reads (from L2 or DRAM) run
    // under this group's arithmetic instead of before it, where the output pass waited on them
    // (docs/performance.md). Column order within each row is the canonical one: no bit changes.
    // Only a whole next group is pumped (P = G: a fixed count keeps its sums in registers); a
    // shorter one (an odd call's last row) takes its statistics after the pass.
    const std::size_t n_next = group_rows(r0 + n_rows);
    const T* ndy[G];
    const T* nx[G];
    row_scalars nst[G];
    for (std::size_t g = 0; g < n_next; ++g) {
      ndy[g] = dy + (r0 + n_rows + g) * dy_stride;
      nx[g] = x + (r0 + n_rows + g) * x_stride;
    }
    // The rows the prefetches fetch: those grad_prefetch_groups groups ahead, into the call's next
    // block (near the call's end, its last row, already cached).
    const T* pdy[G];
    const T* px[G];
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t r = min_of(r0 + g + grad_prefetch_groups * G, rows + rows_after - 1);
      pdy[g] = dy + r * dy_stride;
      px[g] = x + r * x_stride;
    }

    auto pass = [&](auto pumped_rows) {
      constexpr std::size_t P = decltype(pumped_rows)::value;
      row_sums nsum[P ? P : 1];
      for (std::size_t g = 0; g < P; ++g) {
        nst[g] = centring_of(r0 + n_rows + g, nx[g]);
        zero_sums(nsum[g]);
      }
      std::size_t pumped = 0;  // the next rows' columns summed so far (a block boundary)
      // The output pass of the group, S chunks at a time: the group's rows in order into the
      // partials (read before dx is stored: dx may be dy). S chunks of dx make a whole cache line
      // where one chunk is less (AVX2 bf16: two 32-byte halves), so each row's streamed stores fill
      // their line before the next row's begin: rows interleaved half a line at a time left four
      // write-combining lines open at once, and an AVX2 AMD EPYC ran groups of four 2.7x slower
      // (docs/performance.md). contract: dgamma partial p = fma(f(dy_i), n_i, p); dbeta partial
      // q = q + f(dy_i).
      auto chunks = [&](std::size_t i, std::size_t n, bool stream_it, auto sub) NORMKIT_LAMBDA_ALWAYS_INLINE {
        constexpr std::size_t S = decltype(sub)::value;  // n == S * W2, or n <= W2 when S == 1
        const bool whole = n == S * W2;
        const bool whole_partials = IL || whole;  // the scratch's chunks are whole
        B sg[S][2], sb[S][2];
        for (std::size_t s = 0; s < S; ++s) {
          sg[s][0] = sg[s][1] = sb[s][0] = sb[s][1] = B(0.0f);
          const std::size_t j = i + s * W2;
          if (pg && !first) {
            if (whole_partials)
              floats::load(pg + j, sg[s][0], sg[s][1]);
            else
              load_chunk_partial<Arch, false>(pg + j, n, sg[s][0], sg[s][1]);
          }
          if (pb && !first) {
            if (whole_partials)
              floats::load(pb + j, sb[s][0], sb[s][1]);
            else
              load_chunk_partial<Arch, false>(pb + j, n, sb[s][0], sb[s][1]);
          }
        }
        if (prefetch && whole) {  // S chunks fill one line where a chunk is less (chunks_per_line)
          for (std::size_t g = 0; g < G; ++g) {
            prefetch_chunk<Arch>(pdy[g] + i);
            prefetch_chunk<Arch>(px[g] + i);
          }
        }
        for (std::size_t g = 0; g < n_rows; ++g) {
          for (std::size_t s = 0; s < S; ++s) {
            const std::size_t j = i + s * W2;
            values v;
            if (whole)
              load(dyr[g], xr[g], j, st[g], v);
            else
              load_partial(dyr[g], xr[g], j, n, st[g], v);
            B da, db;
            out(v, st[g], da, db);
            for (int h = 0; h < 2; ++h) {
              sg[s][h] = arch_impl::fma<Arch>(v.y[h], v.n[h], sg[s][h]);
              if constexpr (Centered)
                sb[s][h] = sb[s][h] + v.y[h];
            }
            T* const dxp = dxr[g] + j;
            if (stream_it) {
              inputs::template store<false, true>(dxp, da, db);
            } else if (whole) {
              inputs::template store<false, false>(dxp, da, db);
            } else {
              T buf[W2];
              inputs::template store<false, false>(buf, da, db);
              copy_short<W2>(dxp, buf, n);
            }
          }
        }
        for (std::size_t s = 0; s < S; ++s) {
          const std::size_t j = i + s * W2;
          float fbuf[W2];
          if (pg) {
            floats::template store<true, false>(whole_partials ? pg + j : fbuf, sg[s][0], sg[s][1]);
            if (!whole_partials)
              copy_short<W2>(pg + j, fbuf, n);
          }
          if (pb) {
            floats::template store<true, false>(whole_partials ? pb + j : fbuf, sb[s][0], sb[s][1]);
            if (!whole_partials)
              copy_short<W2>(pb + j, fbuf, n);
          }
        }
        if constexpr (P > 0) {  // a step spans at most one block, so at most one block falls due
          if (pumped + canonical_lanes <= i + n) {
            for (std::size_t g = 0; g < P; ++g)
              sum_block(nsum[g], ndy[g], nx[g], pumped, nst[g]);
            pumped += canonical_lanes;
          }
        }
      };
      using one = std::integral_constant<std::size_t, 1>;
      using line = std::integral_constant<std::size_t, chunks_per_line(W2 * sizeof(T))>;
      static_assert(line::value * W2 <= canonical_lanes, "the pump keeps up one block per step");
      std::size_t i = 0;
      for (std::size_t c; i < head; i += c)  // up to the first cache line of dx, then whole lines streamed
        chunks(i, c = min_of(W2, head - i), false, one{});
      if (stream)
        for (; i + line::value * W2 <= cols; i += line::value * W2)
          chunks(i, line::value * W2, true, line{});
      for (; i + W2 <= cols; i += W2)
        chunks(i, W2, stream, one{});
      if (i < cols)
        chunks(i, cols - i, false, one{});
      for (std::size_t g = 0; g < P; ++g)
        finish_sums(nsum[g], ndy[g], nx[g], pumped, nst[g]);
    };
    if (n_next == G) {
      pass(std::integral_constant<std::size_t, G>{});
    } else {
      pass(std::integral_constant<std::size_t, 0>{});
      for (std::size_t g = 0; g < n_next; ++g)
        nst[g] = row_stats_of(r0 + n_rows + g, ndy[g], nx[g]);
    }
    for (std::size_t g = 0; g < n_next; ++g)
      st[g] = nst[g];
    r0 += n_rows;
    // contract: a NaN block partial is stored canonical, once the block's last row is in.
    if (r0 % grad_block_rows == 0 || r0 == rows) {
      for (auto [part, dst] : {std::pair<const float*, float*>{pg, dgamma}, {pb, dbeta}}) {
        if (!part)
          continue;
        dst += k * cols;
        if constexpr (IL) {  // from the scratch's layout to column order
          for (std::size_t i = 0; i < cols; i += W2) {
            B a, b;
            floats::load(part + i, a, b);
            arch_impl::zip2<Arch>(a, b);
            float buf[W2];
            floats::template store<true, false>(i + W2 <= cols ? dst + i : buf, a, b);
            if (i + W2 > cols)
              copy_short<W2>(dst + i, buf, cols - i);
          }
        }
        canonicalize_nans<Arch>(dst, cols);
      }
    }
  }
  if (stream)
    arch_impl::store_fence<Arch>();
}

// A backward op's rows in groups of group_rows (a hint: 4 runs four on AVX-512).
template <class Arch, class Row, class T>
void backward_simd_rows(const T* dy, const T* x, const float* gain, const float* rstd, const float* mean,
                        T* dx, float* dgamma, float* dbeta, std::size_t rows, std::size_t cols,
                        std::size_t dy_stride, std::size_t x_stride, std::size_t dx_stride, bool stream,
                        bool far_inputs, std::size_t rows_after, float* work, std::size_t group_rows) {
  if constexpr (has_wide_grad_groups<Arch>) {
    if (group_rows == 4) {
      backward_group_rows<Arch, Row, 4>(dy, x, gain, rstd, mean, dx, dgamma, dbeta, rows, cols, dy_stride,
                                        x_stride, dx_stride, stream, far_inputs, rows_after, work);
      return;
    }
  }
  backward_group_rows<Arch, Row, 2>(dy, x, gain, rstd, mean, dx, dgamma, dbeta, rows, cols, dy_stride,
                                    x_stride, dx_stride, stream, far_inputs, rows_after, work);
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
