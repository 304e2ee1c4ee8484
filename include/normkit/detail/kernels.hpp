// normkit: the SIMD kernels, written once and templated on the xsimd arch (fma3<avx2>,
// avx512bw, neon64). The 64 canonical partials live in 64 / lanes registers, so each term lands
// in the partial the reference puts it in, whatever the width; tails are zero-padded copies, so
// no load or store ever leaves the row. Every step quotes the contract line it implements.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>  // std::size_t
#include <cstring>  // std::memcpy, std::memset

#include "../policy.hpp"
#include "../types.hpp"
#include "abi.hpp"
#include "canonical_sum.hpp"
#include "convert.hpp"
#include "epilogue.hpp"

namespace normkit {
namespace detail {

enum class op { rms_norm, layer_norm };

template <class Arch>
struct simd_ops {
  using batch = xsimd::batch<float, Arch>;
  static batch fma(batch a, batch b, batch c) { return xsimd::fma(a, b, c); }
  static batch div(batch a, batch b) { return arch_impl::div<Arch>(a, b); }
  template <class T>
  static batch round_through(batch v) {
    return io<T, Arch>::round_through(v);
  }
};

template <class Arch>
struct shape {
  using batch = xsimd::batch<float, Arch>;
  static constexpr std::size_t width = batch::size;
  static constexpr std::size_t accumulators = canonical_lanes / width;  // 4 / 8 / 16
  static_assert(canonical_lanes % width == 0, "the canonical order needs lanes dividing 64");
};

// The last n < width elements, zero-padded; reads exactly n elements.
template <class Arch, class T>
xsimd::batch<float, Arch> load_partial(const T* p, std::size_t n) {
  T buf[shape<Arch>::width];
  std::memcpy(buf, p, n * sizeof(T));
  std::memset(static_cast<void*>(buf + n), 0, (shape<Arch>::width - n) * sizeof(T));
  return io<T, Arch>::load(buf);
}

template <class Arch, class T>
void store_partial(T* p, xsimd::batch<float, Arch> v, std::size_t n) {
  T buf[shape<Arch>::width];
  io<T, Arch>::store(buf, v);
  std::memcpy(p, buf, n * sizeof(T));
}

template <class Arch>
xsimd::batch_bool<float, Arch> first_lanes(std::size_t n) {
  alignas(64) static constexpr float iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  using B = xsimd::batch<float, Arch>;
  return B::load_aligned(iota) < B(static_cast<float>(n));
}

// contract: fold halves. Across registers while w >= width, then fold_halves on the last one.
template <class Arch>
NORMKIT_ALWAYS_INLINE float fold(xsimd::batch<float, Arch>* acc) {
  constexpr std::size_t A = shape<Arch>::accumulators, W = shape<Arch>::width;
  for (std::size_t n = A; n > 1; n /= 2)
    for (std::size_t k = 0; k < n / 2; ++k)
      acc[k] = acc[k] + acc[k + n / 2];
  alignas(64) float p[W];
  acc[0].store_aligned(p);
  return fold_halves<Arch, W>(p);
}

// Runs body(acc, v, valid) over the row in canonical order: register j of a 64-element block
// holds partials [j*W, j*W + W). `valid` is the lane count of a zero-padded tail (W otherwise).
template <class Arch, class In, class Body>
NORMKIT_ALWAYS_INLINE float canonical_sum(const In* x, std::size_t cols, Body body) {
  using B = typename shape<Arch>::batch;
  constexpr std::size_t A = shape<Arch>::accumulators, W = shape<Arch>::width;
  B acc[A];
  for (std::size_t j = 0; j < A; ++j)
    acc[j] = B(0.0f);
  std::size_t i = 0;
  for (; i + canonical_lanes <= cols; i += canonical_lanes) {
#pragma GCC unroll 16
    for (std::size_t j = 0; j < A; ++j)
      acc[j] = body(acc[j], io<In, Arch>::load(x + i + j * W), W);
  }
  // The last < 64 elements; constant register indices keep acc[] in registers.
#pragma GCC unroll 16
  for (std::size_t j = 0; j < A; ++j, i += W) {
    if (i + W <= cols)
      acc[j] = body(acc[j], io<In, Arch>::load(x + i), W);
    else if (i < cols)
      acc[j] = body(acc[j], load_partial<Arch>(x + i, cols - i), cols - i);
  }
  return fold<Arch>(acc);
}

// What the output pass needs from a row's statistics. RMSNorm has shift = mean = 0.
struct row_stats {
  float sum;    // RMSNorm: csum(x'^2); LayerNorm: csum(c'^2)
  float shift;  // LayerNorm: K = f(x_0) * scale
  float mean;   // LayerNorm: m
  float scale;  // 1, or 2^-e on the overflow path
  float eps;    // eps, or the scaled eps on the overflow path
  bool nan_row;
};

// contract: s = csum(f(x_i)^2), fma into partials; overflow: redo on x * 2^-e.
template <class Arch, class In>
row_stats rms_stats(const In* x, std::size_t cols, float eps) {
  using B = typename shape<Arch>::batch;
  row_stats st{0.0f, 0.0f, 0.0f, 1.0f, eps, false};
  st.sum = canonical_sum<Arch>(x, cols, [](B acc, B v, std::size_t) { return xsimd::fma(v, v, acc); });
  if (st.sum <= max_finite)
    return st;
  // Rare rows: a NaN/Inf input gives NaNs; a finite row whose squares overflow is redone scaled.
  if (!all_finite<Arch>(x, cols))
    return st.nan_row = true, st;
  const overflow_scale o = make_overflow_scale<Arch>(max_abs<Arch>(x, cols), eps);
  const B sc(o.scale);
  st.scale = o.scale;
  st.eps = o.eps;
  st.sum = canonical_sum<Arch>(x, cols, [&](B acc, B v, std::size_t) {
    const B t = v * sc;
    return xsimd::fma(t, t, acc);
  });
  return st;
}

// contract: K = f(x_0); d_i = f(x_i) - K; m = csum(d_i) / float(d); c_i = d_i - m;
// var = csum(c_i^2); padding lanes add 0. d_i is computed as fma(f(x_i), scale, -K), which is
// f(x_i) - K exactly when scale is 1 and the overflow path's value otherwise.
template <class Arch, class In>
row_stats layer_stats(const In* x, std::size_t cols, float eps, float scale) {
  using B = typename shape<Arch>::batch;
  constexpr std::size_t Wd = shape<Arch>::width;
  row_stats st{0.0f, to_float(x[0]) * scale, 0.0f, scale, eps, false};
  const B neg_k(-st.shift), sc(scale);
  st.mean = canonical_sum<Arch>(
                x, cols,
                [&](B acc, B v, std::size_t valid) {
                  const B d = xsimd::fma(v, sc, neg_k);
                  return acc + (valid == Wd ? d : xsimd::select(first_lanes<Arch>(valid), d, B(0.0f)));
                }) /
            static_cast<float>(cols);
  const B mb(st.mean);
  st.sum = canonical_sum<Arch>(x, cols, [&](B acc, B v, std::size_t valid) {
    B c = xsimd::fma(v, sc, neg_k) - mb;
    if (valid != Wd)
      c = xsimd::select(first_lanes<Arch>(valid), c, B(0.0f));
    return xsimd::fma(c, c, acc);
  });
  if (st.sum <= max_finite || scale != 1.0f)
    return st;
  if (!all_finite<Arch>(x, cols))
    return st.nan_row = true, st;
  const overflow_scale o = make_overflow_scale<Arch>(max_abs<Arch>(x, cols), eps);
  return layer_stats<Arch>(x, cols, o.eps, o.scale);
}

// Gains that change nothing, read with step 0 when gamma is null: g = 1 (0 for the 1 + gamma
// offset), so one output loop serves both cases.
template <class Arch, class W>
const W* neutral_values(int which) {  // 0: zeros, 1: ones
  alignas(64) static const W table[2][16] = {
      {from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f),
       from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f),
       from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f),
       from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f), from_float<W>(0.0f)},
      {from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f),
       from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f),
       from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f),
       from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f), from_float<W>(1.0f)}};
  return table[which];
}

// contract: n_i = c_i * inv (or / sqrt); y_i = Out(f(Mid(n_i)) or n_i times g_i, plus b_i by fma);
// NaN outputs are the canonical quiet NaN. A null gamma reads neutral gains with step 0. The loop
// exists in three shapes (RMSNorm; LayerNorm with and without bias) inside one instantiation.
template <class Arch, class Knobs, class In, class W, class Out>
void write_row(const In* x, const W* gamma, const W* beta, Out* y, std::size_t cols, float factor,
               const row_stats& st, bool centered) {
  using B = typename shape<Arch>::batch;
  using Mid = mid_of<Knobs, In, W>;
  constexpr std::size_t Wd = shape<Arch>::width;
  const std::size_t g_step = gamma ? 1 : 0;
  const W* gp = gamma ? gamma : neutral_values<Arch, W>(Knobs::gain == gain_mode::plus_one ? 0 : 1);
  const B f(factor), sc(st.scale), neg_k(-st.shift), mb(st.mean);
  auto loop = [&](auto has_beta, auto is_centered) {
    constexpr bool HasBeta = decltype(has_beta)::value, Centered = decltype(is_centered)::value;
    auto compute = [&](B v, B g, B b) {
      // RMSNorm: f(x_i) * scale; LayerNorm: c_i = fma(f(x_i), scale, -K) - m.
      B c;
      if constexpr (Centered)
        c = xsimd::fma(v, sc, neg_k) - mb;
      else
        c = v * sc;
      const B n = normalized<Knobs, simd_ops<Arch>>(c, f);
      return affine<Knobs, Mid, simd_ops<Arch>, HasBeta>(n, gain_value<Knobs>(g), b);
    };
    auto bias = [&](std::size_t i) {
      if constexpr (HasBeta)
        return io<W, Arch>::load(beta + i);
      else
        return B(0.0f);
    };
    std::size_t i = 0;
    for (; i + 2 * Wd <= cols; i += 2 * Wd) {
      const B r0 = compute(io<In, Arch>::load(x + i), io<W, Arch>::load(gp + i * g_step), bias(i));
      const B r1 = compute(io<In, Arch>::load(x + i + Wd), io<W, Arch>::load(gp + (i + Wd) * g_step), bias(i + Wd));
      io<Out, Arch>::store2_canonical(y + i, r0, r1);
    }
    for (; i + Wd <= cols; i += Wd)
      io<Out, Arch>::store_canonical(y + i, compute(io<In, Arch>::load(x + i), io<W, Arch>::load(gp + i * g_step), bias(i)));
    if (i < cols) {
      const std::size_t n = cols - i;
      const B b = HasBeta ? load_partial<Arch>(beta + i, n) : B(0.0f);
      Out buf[Wd];
      io<Out, Arch>::store_canonical(buf, compute(load_partial<Arch>(x + i, n), load_partial<Arch>(gp + i * g_step, n), b));
      std::memcpy(y + i, buf, n * sizeof(Out));
    }
  };
  using yes = std::true_type;
  using no = std::false_type;
  if (!centered)
    loop(no{}, no{});
  else if (beta)
    loop(yes{}, yes{});
  else
    loop(no{}, yes{});
}

// Bulk conversion with the bits of types.hpp (NaN payloads kept, not canonicalized).
template <class Arch, class Src, class Dst>
void convert_n(const Src* src, Dst* dst, std::size_t n) {
  constexpr std::size_t Wd = shape<Arch>::width;
  std::size_t i = 0;
  for (; i + Wd <= n; i += Wd)
    io<Dst, Arch>::store(dst + i, io<Src, Arch>::load(src + i));
  if (i < n)
    store_partial<Arch>(dst + i, load_partial<Arch>(src + i, n - i), n - i);
}

template <class Arch, op Op, class Knobs, class In, class W, class Out>
void norm_rows(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows, std::size_t cols,
               float eps, std::size_t x_stride, std::size_t y_stride) {
  for (std::size_t r = 0; r < rows; ++r) {
    const In* xr = x + r * x_stride;
    Out* yr = y + r * y_stride;
    const row_stats st =
        Op == op::rms_norm ? rms_stats<Arch>(xr, cols, eps) : layer_stats<Arch>(xr, cols, eps, 1.0f);
    if (st.nan_row) {
      fill_nan<Arch>(yr, cols);
      continue;
    }
    // contract: inv = 1 / sqrt(ms + eps) with ms = s / float(d)   (or var for LayerNorm)
    const float factor = row_factor<Knobs, Arch>(st.sum, cols, st.eps);
    write_row<Arch, Knobs, In, W, Out>(xr, gamma, beta, yr, cols, factor, st, Op == op::layer_norm);
  }
}

}  // namespace detail
}  // namespace normkit
