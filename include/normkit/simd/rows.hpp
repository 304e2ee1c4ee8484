// SPDX-License-Identifier: MIT
// normkit: the SIMD row machinery every op is written with, templated on the xsimd arch
// (fma3<avx2>, avx512bw, neon64) and not knowing which op runs: row sources, the canonical sum,
// finiteness scans, the output loop and the row-group driver. Rows move in chunks of two
// registers (chunk.hpp). The 64 canonical partials live in 64 / lanes registers, so each term
// lands in the partial the reference puts it in, whatever the width or lane layout; tails are
// zero-padded copies, so no load or store ever leaves the row. Every step quotes the contract
// line it implements; docs/performance.md says why the loops are shaped as they are.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <xsimd/xsimd.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int32_t
#include <cstring>      // std::memcpy, std::memset
#include <type_traits>  // std::conditional_t, std::true_type, std::is_same
#include <utility>      // std::index_sequence

#include "../core/abi.hpp"
#include "../core/ahead.hpp"
#include "../core/canonical_sum.hpp"
#include "../core/epilogue.hpp"
#include "../core/math.hpp"
#include "../core/policy.hpp"
#include "../core/scalar_rows.hpp"  // scalar_ops
#include "../core/storage.hpp"
#include "../core/tuning.hpp"
#include "chunk.hpp"
#include "diagnostics.hpp"
#include "io.hpp"

NORMKIT_INTRINSICS_BEGIN

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <class Arch>
struct simd_ops {
  using batch = xsimd::batch<float, Arch>;
  static batch fma(batch a, batch b, batch c) { return arch_impl::fma<Arch>(a, b, c); }
  static batch div(batch a, batch b) { return arch_impl::div<Arch>(a, b); }
  static batch sqrt(batch a) { return arch_impl::sqrt<Arch>(a); }
  template <class T>
  static batch round_through(batch v) {
    return io<T, Arch>::round_through(v);
  }
};

// The same operations without NaN handling, for rows that cannot produce a NaN (see write_row).
template <class Arch>
struct finite_ops : simd_ops<Arch> {
  using batch = xsimd::batch<float, Arch>;
  template <class T>
  static batch round_through(batch v) {
    return io<T, Arch>::round_through_finite(v);
  }
};

template <class Arch>
struct shape {
  using batch = xsimd::batch<float, Arch>;
  static constexpr std::size_t width = batch::size;
  static constexpr std::size_t accumulators = canonical_lanes / width;  // 4 / 8 / 16
  static_assert(canonical_lanes % width == 0, "the canonical order needs lanes dividing 64");
};

// The last n < width elements, zero-padded; reads exactly n elements (convert_n).
template <class Arch, class T>
xsimd::batch<float, Arch> load_partial(const T* p, std::size_t n) {
  T buf[shape<Arch>::width];
  std::memset(static_cast<void*>(buf), 0, sizeof(buf));
  copy_short<shape<Arch>::width>(buf, p, n);
  return io<T, Arch>::load(buf);
}

template <class Arch, class T>
void store_partial(T* p, xsimd::batch<float, Arch> v, std::size_t n) {
  T buf[shape<Arch>::width];
  io<T, Arch>::store(buf, v);
  copy_short<shape<Arch>::width>(p, buf, n);
}

// One step of the fold across registers: acc[k] = acc[k] + acc[k + N/2], k < N/2, as a pack, so
// every index is a constant the compiler sees before it decides where acc[] lives: with loops
// (unrolled only later), g++ 12 kept the accumulators in memory, storing and reloading all of
// them per row (25 of a 128-column row's 135 statistics instructions, and a store-to-load round trip
// on the reduction's critical path).
template <std::size_t N, class B, std::size_t... K>
NORMKIT_ALWAYS_INLINE void fold_step(B* acc, std::index_sequence<K...>) {
  ((acc[K] = acc[K] + acc[K + N / 2]), ...);
}

template <std::size_t N, class B>
NORMKIT_ALWAYS_INLINE void fold_registers(B* acc) {
  if constexpr (N > 2) {
    fold_step<N>(acc, std::make_index_sequence<N / 2>{});
    fold_registers<N / 2>(acc);
  }
}

// contract: fold halves. Across registers while w >= 2 * width (acc[2c + r] holds register r of
// chunk c, so acc[k] + acc[k + n/2] adds partials w apart), then within the last chunk, where
// the layout decides the order. Split (a = p[0, W), b = p[W, 2W)): w = W adds a + b, then the
// sum halves in its register. Interleaved (p[2l + r] = register r lane l): for w >= 2,
// p[k + w] sits w/2 lanes above p[k] in the same register, so a and b halve on their own, and
// w = 1 adds p[0] + p[1], a's lane 0 + b's.
template <class Arch, bool Interleaved>
NORMKIT_ALWAYS_INLINE float fold(xsimd::batch<float, Arch>* acc) {
  fold_registers<shape<Arch>::accumulators>(acc);
  if constexpr (Interleaved)
    return arch_impl::halve_sum<Arch>(acc[0]) + arch_impl::halve_sum<Arch>(acc[1]);
  else
    return arch_impl::halve_sum<Arch>(acc[0] + acc[1]);
}

// Element by element: a zeroing loop over acc[] becomes a `rep stos` memset in g++ 12, whose
// start-up cost was a third of a 128-column row's statistics.
template <class B, std::size_t... I>
NORMKIT_ALWAYS_INLINE void zero_all(B* acc, std::index_sequence<I...>) {
  ((acc[I] = B(0.0f)), ...);
}

// Prefetches the lines of the `bytes` bytes at p, one line at a time: into L2 to be read, or into
// L1 to be written (ForWrite). A write covers a whole row, maybe off a line, so its last line too;
// reads go chunk by chunk, each next chunk's prefetch taking the line the last one missed.
template <class Arch, bool ForWrite = false>
NORMKIT_ALWAYS_INLINE void prefetch_bytes(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (std::size_t o = 0; o < bytes; o += cache_line) {
    if constexpr (ForWrite)
      arch_impl::prefetch_for_write<Arch>(c + o);
    else
      arch_impl::prefetch<Arch>(c + o);
  }
  if constexpr (ForWrite)
    arch_impl::prefetch_for_write<Arch>(c + bytes - 1);
}
// The lines of the chunk of 2W elements at p (an AVX-512 f32 chunk spans two).
template <class Arch, class T>
NORMKIT_ALWAYS_INLINE void prefetch_chunk(const T* p) {
  prefetch_bytes<Arch>(p, 2 * shape<Arch>::width * sizeof(T));
}

// Rows to prefetch alongside one row: prefetch(i, n) brings into L2 the lines of elements
// [i, i + n) of each (elem bytes apart). Null p[k]: nothing from it.
template <class Arch>
struct ahead_row {
  const char* p[2];
  std::size_t elem;
  NORMKIT_ALWAYS_INLINE void prefetch(std::size_t i, std::size_t n) const {
    for (const char* row : p)
      if (row)
        prefetch_bytes<Arch>(row + i * elem, n * elem);
  }
  // One row: in, elements of T.
  template <class T>
  static ahead_row one(const T* in) {
    return {{reinterpret_cast<const char*>(in), nullptr}, sizeof(T)};
  }
  // Row r of a hint (core/ahead.hpp), or none past its rows.
  static ahead_row of(const rows_ahead& h, std::size_t r) {
    if (!h.at[0] || r >= h.rows)
      return {{nullptr, nullptr}, 0};
    auto at = [&](int k) { return h.at[k] ? static_cast<const char*>(h.at[k]) + r * h.stride[k] : nullptr; };
    return {{at(0), at(1)}, h.elem};
  }
};

// A row's values as the ops read them: here the input row itself (f(x_i), exactly). The row
// machinery reads rows only through a source, so an op whose values are computed (x + residual)
// brings its own source and reuses every loop below.
template <class Arch, bool Interleaved, class In>
struct plain_source {
  using batch = xsimd::batch<float, Arch>;
  const In* x;
  // The rows the streaming output loops prefetch: the next one, or this one for the call's last
  // row (its lines are in cache: a wasted load slot per chunk, where testing for none cost a
  // branch), or a composite's next chunk (norm_rows' `ahead`). None in sources that only compute
  // statistics.
  ahead_row<Arch> next;

  // One chunk of 2W values at i; the n < 2W values at i, zero-padded, reading exactly n.
  NORMKIT_ALWAYS_INLINE void load(std::size_t i, batch& a, batch& b) const {
    chunk_io<In, Arch, Interleaved>::load(x + i, a, b);
  }
  NORMKIT_ALWAYS_INLINE void load_partial(std::size_t i, std::size_t n, batch& a, batch& b) const {
    load_chunk_partial<Arch, Interleaved>(x + i, n, a, b);
  }
  // The lines of the next rows' chunk at i.
  NORMKIT_ALWAYS_INLINE void prefetch_next(std::size_t i) const { next.prefetch(i, 2 * shape<Arch>::width); }
  // Rare paths (non-finite and overflow rows).
  float first() const { return to_float(x[0]); }
  bool all_finite(std::size_t cols) const;
  float max_abs(std::size_t cols) const { return detail::max_abs<Arch>(x, cols); }
};

// Runs body(acc, v, keep) over the row's values in canonical order: each 64-element block is
// 64 / 2W chunks, register r of chunk c accumulates into acc[2c + r], and fold() undoes the lane
// layout. keep is null for full registers, else the lanes holding real elements of a zero-padded
// tail.
template <class Arch, bool Interleaved, class Source, class Body>
NORMKIT_ALWAYS_INLINE float canonical_sum(const Source& src, std::size_t cols, Body body) {
  using B = typename shape<Arch>::batch;
  using M = xsimd::batch_bool<float, Arch>;
  constexpr std::size_t A = shape<Arch>::accumulators, W2 = 2 * shape<Arch>::width;
  const M* all = nullptr;
  B acc[A];
  zero_all(acc, std::make_index_sequence<A>{});
  std::size_t i = 0;
  for (; i + canonical_lanes <= cols; i += canonical_lanes) {
#pragma GCC unroll 8
    for (std::size_t j = 0; j < A; j += 2) {
      B a, b;
      src.load(i + j / 2 * W2, a, b);
      acc[j] = body(acc[j], a, all);
      acc[j + 1] = body(acc[j + 1], b, all);
    }
  }
  // The last < 64 elements, if any (the common widths, 128 and 4096, skip the tail's branches);
  // constant register indices keep acc[] in registers.
  if (i == cols)
    return fold<Arch, Interleaved>(acc);
#pragma GCC unroll 8
  for (std::size_t j = 0; j < A; j += 2, i += W2) {
    B a, b;
    if (i + W2 <= cols) {
      src.load(i, a, b);
      acc[j] = body(acc[j], a, all);
      acc[j + 1] = body(acc[j + 1], b, all);
    } else if (i < cols) {
      src.load_partial(i, cols - i, a, b);
      const M ka = chunk_lanes_below<Arch, Interleaved>(0, cols - i),
              kb = chunk_lanes_below<Arch, Interleaved>(1, cols - i);
      acc[j] = body(acc[j], a, &ka);
      acc[j + 1] = body(acc[j + 1], b, &kb);
    }
  }
  return fold<Arch, Interleaved>(acc);
}

// True when p[0, n) holds no NaN and no Inf. On the raw bits: with the sign cleared, NaN and
// +-Inf are exactly the values >= the exponent mask, so running lane-wise maxima (two operations
// per batch, four independent chains, no mask moved to a scalar register) are checked once at
// the end. The tail is a zero-padded copy.
template <class Arch, class T>
bool all_finite_bits(const T* p, std::size_t n) {
  using U = typename storage_traits<T>::bits;
  using UB = xsimd::batch<U, Arch>;
  constexpr std::size_t L = UB::size;
  const UB magnitude(storage_traits<T>::magnitude_mask);
  const U* u = reinterpret_cast<const U*>(p);
  auto word = [&](std::size_t i) { return UB::load_unaligned(u + i) & magnitude; };
  UB t0(U(0)), t1(U(0)), t2(U(0)), t3(U(0));
  std::size_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    t0 = xsimd::max(t0, word(i));
    t1 = xsimd::max(t1, word(i + L));
    t2 = xsimd::max(t2, word(i + 2 * L));
    t3 = xsimd::max(t3, word(i + 3 * L));
  }
  for (; i + L <= n; i += L)
    t0 = xsimd::max(t0, word(i));
  alignas(64) U lanes[L] = {};
  copy_short<L>(lanes, u + i, n - i);
  const UB top = xsimd::max(xsimd::max(t0, t1), xsimd::max(t2, t3));
  xsimd::max(top, UB::load_aligned(lanes) & magnitude).store_aligned(lanes);
  U worst = 0;
  for (std::size_t l = 0; l < L; ++l)
    worst = max_of(worst, lanes[l]);
  return worst < storage_traits<T>::exponent_mask;
}

template <class Arch, bool Interleaved, class In>
bool plain_source<Arch, Interleaved, In>::all_finite(std::size_t cols) const {
  return all_finite_bits<Arch>(x, cols);
}

// What the output pass needs from a row's statistics. RMSNorm has shift = mean = 0.
struct row_stats {
  float sum;    // RMSNorm: csum(x'^2); LayerNorm: csum(c'^2)
  float shift;  // LayerNorm: K = f(x_0) * scale, plus m when refined
  float mean;   // LayerNorm: m
  float scale;  // 1, or 2^-e on the overflow path
  float eps;    // eps, or the scaled eps on the overflow path
  bool nan_row;
};

// Gains read with step 0 in place of a null gamma: 1 (0 for the 1 + gamma offset), since
// m * 1 == m and 1 + 0 == 1 exactly in every rounding mode. One chunk of each (32: AVX-512's 2W).
// A null beta has no neutral value: fma(m, g, -0.0) differs from m * g in the sign of a zero
// under FE_DOWNWARD, fma(m, g, +0.0) under the other modes, so write_row has a no-bias variant.
template <class W>
struct neutral_table {
  enum which { zero, one };
  alignas(64) W v[2][32];
  neutral_table() {
    for (std::size_t i = 0; i < 32; ++i)
      v[zero][i] = from_float<W>(0.0f), v[one][i] = from_float<W>(1.0f);
  }
};

template <class Arch, class W>
const W* neutral_values(typename neutral_table<W>::which which) {
  static_assert(2 * shape<Arch>::width <= 32, "neutral_table holds one chunk");
  static const neutral_table<W> table;
  return table.v[which];
}

// Whether a row can skip NaN handling. Its statistics are finite (NaN/Inf rows and overflow
// were dealt with before), so every c_i is finite and |c_i| <= sqrt(d * var) up to underflow,
// hence |n_i| < 2^12 * sqrt(d) whenever the factor is finite (multiply) or positive (divide:
// c_i / +Inf is 0). Then with finite gains and bias no product, sum or rounding yields NaN
// (overflow gives +-Inf, never NaN), and the NaN selects would change no bit.
template <class Knobs>
bool clean_factor(float factor) {
  if constexpr (Knobs::norm == normalize::divide)
    return factor > 0.0f;
  else
    return factor - factor == 0.0f;
}

// Whether a kernel checks its gains in the first clean row's output pass (write_row) instead of
// scanning them before: the all-fp32 kernels, whose rows leave the vector units room for the check
// and whose gains are the most bytes to scan. The 16-bit kernels are bound on their conversions
// and measured no faster with it (Zen 3, 1x4096: LayerNorm bf16/f16 2-5 % slower;
// docs/performance.md), so they keep the scan, and one loop instantiation fewer.
template <class In, class W, class Out>
constexpr bool checks_gains_in_output = (std::is_same<In, float>::value && std::is_same<W, float>::value &&
                                         std::is_same<Out, float>::value);

// What a call knows of its gains: gamma and beta (when given) hold no NaN or Inf, hold one, or
// have not been looked at yet -- then the first clean row finds out while it writes (write_row).
enum class gains_state : unsigned char { finite, non_finite, unchecked };

// How norm_rows wants each row written: the gains' state (updated by write_row) and the call's
// streaming decision.
struct write_mode {
  gains_state gains;
  bool stream;    // the output is too big to stay cached: non-temporal stores
  bool prefetch;  // unstreamed rows prefetch the next one (the sink wants to, the input is far: tuning.hpp)
  bool peel;      // a row starting inside a line writes up to its end in partial chunks: streamed rows
                  // (whole lines), and big calls' rows (tuning.hpp, peels)
};

// Where a normalizing op's output pass puts a row: store_sink stores Out (the plain ops); the
// statically quantized norm has its own (ops/norm_static_quant_simd.hpp). A sink gets the fp32
// values the policy would round to Out, a chunk at a time in the kernel's chunk layout:
//   out_type, interleaved, can_stream    its element type, its chunk layout, whether it may stream
//   prefetches_far_rows                  whether unstreamed rows prefetch when the input is far
//   at(offset)                           the sink of the row at element `offset`
//   address(i)                           where element i goes (streaming aligns to cache lines)
//   store<Finite, Stream>(i, a, b)       a whole chunk at element i (Finite: no NaN in a, b)
//   store_partial(i, n, a, b)            the first n < 2W elements of a chunk
//   fill_nan(cols)                       a NaN row (the canonical NaN for every value)
//   merge(row), finish()                 a row sink's state into the call's; the end of the call
template <class Arch, bool Interleaved, class Out>
struct store_sink {
  using B = xsimd::batch<float, Arch>;
  using out_type = Out;
  // No prefetch in unstreamed rows: the test per chunk cost f32 rows 7-12 % (core/tuning.hpp).
  static constexpr bool interleaved = Interleaved, can_stream = true, prefetches_far_rows = false;
  Out* y;

  store_sink at(std::size_t offset) const { return {y + offset}; }
  const void* address(std::size_t i) const { return y + i; }
  template <bool Finite, bool Stream>
  NORMKIT_ALWAYS_INLINE void store(std::size_t i, B a, B b) {
    chunk_io<Out, Arch, Interleaved>::template store<Finite, Stream>(y + i, a, b);
  }
  NORMKIT_ALWAYS_INLINE void store_partial(std::size_t i, std::size_t n, B a, B b) {
    Out buf[2 * B::size];
    chunk_io<Out, Arch, Interleaved>::template store<false, false>(buf, a, b);
    copy_short<2 * B::size>(y + i, buf, n);
  }
  void fill_nan(std::size_t cols) { detail::fill_nan<Arch>(y, cols); }
  void merge(const store_sink&) {}
  void finish() {}
#if defined(NORMKIT_HW_FP16)
  // A whole chunk's fp16(n) times its fp16 gains g, rounded once (write_row, fp16_products).
  static constexpr bool stores_fp16_products = true;
  template <bool Stream>
  NORMKIT_ALWAYS_INLINE void store_fp16_products(std::size_t i, B a, B b, const fp16* g) {
    arch_impl::fp16_mid_product_store2<Arch, Stream>(reinterpret_cast<std::uint16_t*>(y + i), a, b,
                                                     reinterpret_cast<const std::uint16_t*>(g));
  }
#endif
};

// Whether write_row's clean rows take Out(f(Mid(n)) * g) as one fp16 multiply (avx512fp16:
// core/isa_table.hpp): uncentred rows whose epilogue is that product (fp16_product_epilogue), into
// a sink that stores fp16 products (simd/arch_x86.hpp, fp16_mid_product_store2).
template <class Sink, class = void>
struct stores_fp16_products : std::false_type {};
template <class Sink>
struct stores_fp16_products<Sink, std::void_t<decltype(Sink::stores_fp16_products)>> : std::true_type {};
template <class Knobs, class Mid, class W, class Sink, bool Centered>
constexpr bool fp16_products = stores_fp16_products<Sink>::value && !Centered && !Sink::interleaved &&
                               fp16_product_epilogue<Knobs, Mid, W, typename Sink::out_type>;

// contract: n_i = c_i * inv (or / sqrt); y_i = Out(f(Mid(n_i)) or n_i times g_i, plus b_i by fma);
// no bias: Out(n_i * g_i), a plain product; NaN outputs are the canonical quiet NaN. A null gamma
// reads neutral gains with step 0. Each op has a fast loop for clean rows (no NaN selects;
// streaming stores and a prefetch of the next row when mode.stream) and a general one for every
// other row, and centered rows (Row::centered: c_i = d_i - m) have both with and without a bias:
// an uncentered row never goes through the centered formula, and no call adds a "neutral" bias,
// so every path applies the reference's operations -- the same bits in every rounding mode,
// signed zeros included.
//
// Gains not yet checked (mode.gains == unchecked, all-fp32 kernels): the first clean row runs the fast loop
// with plain stores while keeping the largest magnitude bits of every gain and bias register it loads (an AND
// and a max per register, integer ops that raise no flag; no second pass over the gains). If one is NaN or
// +-Inf, the row is written again by the general loop, which overwrites every value; the fast pass's sink
// state is dropped. Not for rows written in place: the first pass would have overwritten x.
//
// Inlined into norm_rows, loops included: as a call, the per-row set-up (closure captures
// reloaded through a pointer, callee-saved registers) cost short rows dearly; the whole-chunk loops
// unroll by two, halving their index and pointer updates (docs/performance.md).
template <class Arch, class Row, class Knobs, class In, class W, class Sink, class Source>
NORMKIT_ALWAYS_INLINE void write_row(const Source& src, const W* gamma, const W* beta, Sink& sink,
                                     std::size_t cols, float factor, const row_stats& st, write_mode& mode) {
  using B = typename shape<Arch>::batch;
  using Mid = mid_of<Knobs, In, W>;
  using table = neutral_table<W>;
  using Out = typename Sink::out_type;
  constexpr bool IL = Sink::interleaved;
  constexpr bool Centered = Row::centered;
  constexpr std::size_t W2 = 2 * shape<Arch>::width;
  const std::size_t g_step = gamma ? 1 : 0;
  const W* gp =
      gamma ? gamma : neutral_values<Arch, W>(Knobs::gain == gain_mode::plus_one ? table::zero : table::one);
  const W* bp = beta;
  const B f(factor), sc(st.scale), neg_k(-st.shift), mb(st.mean);
  auto loop = [&](auto fast, auto bias, auto check) NORMKIT_LAMBDA_ALWAYS_INLINE {
    constexpr bool Fast = decltype(fast)::value, HasBias = decltype(bias)::value,
                   Check = decltype(check)::value;
    using Ops = std::conditional_t<Fast, finite_ops<Arch>, simd_ops<Arch>>;
    // Locals, not captures: the compiler reads a capture through the closure, and reloads it
    // after every store, which may alias it.
    Sink yo = sink;
    const Source row = src;
    const std::size_t end = cols;
    const bool prefetch = mode.prefetch;
    auto compute = [=](B v, B g, B b) {
      B c;
      if constexpr (Centered)  // contract: c_i = d_i - m, d_i = fma(f(x_i), scale, -K)
        c = arch_impl::fma<Arch>(v, sc, neg_k) - mb;
      else if constexpr (Fast)  // clean RMSNorm rows have scale 1
        c = v;
      else  // contract (overflow): x'_i = f(x_i) * 2^-e
        c = v * sc;
      return affine<Knobs, Mid, Ops, HasBias>(normalized<Knobs, Ops>(c, f), gain_value<Knobs>(g), b);
    };
    // One chunk of 2W elements at i, or (partial) the n < 2W left, through zero-padded copies
    // that never leave the row. Kept apart so the full one stays small enough to inline.
    using I = xsimd::batch<std::int32_t, Arch>;
    I seen(0);  // Check: the largest |g| (and |b|) of the row, as bits
    auto watch = [](I& acc, B ga, B gb, B ba, B bb) NORMKIT_LAMBDA_ALWAYS_INLINE {
      if constexpr (Check) {
        auto magnitude = [](B v) { return bitwise_as<I>(v) & I(storage_traits<float>::magnitude_mask); };
        I m = xsimd::max(magnitude(ga), magnitude(gb));
        if constexpr (HasBias)
          m = xsimd::max(m, xsimd::max(magnitude(ba), magnitude(bb)));
        acc = xsimd::max(acc, m);
      }
    };
    auto full = [=](std::size_t i, B& ra, B& rb, I& acc) {
      B xa, xb, ga, gb, ba(0.0f), bb(0.0f);
      row.load(i, xa, xb);
      chunk_io<W, Arch, IL>::load(gp + i * g_step, ga, gb);
      if constexpr (HasBias)
        chunk_io<W, Arch, IL>::load(bp + i, ba, bb);
      watch(acc, ga, gb, ba, bb);
      ra = compute(xa, ga, ba);
      rb = compute(xb, gb, bb);
    };
    // A whole chunk of a clean row straight to the sink, as fp16 products (fp16_products). s is
    // generic so that clang looks the member up only in the sinks that are asked for it.
    auto full_fp16 = [=](std::size_t i, auto& s, auto stream) NORMKIT_LAMBDA_ALWAYS_INLINE {
      B xa, xb;
      row.load(i, xa, xb);
      s.template store_fp16_products<decltype(stream)::value>(i, normalized<Knobs, Ops>(xa, f),
                                                              normalized<Knobs, Ops>(xb, f), gp + i * g_step);
    };
    auto partial = [&](std::size_t i, std::size_t n) {
      B xa, xb, ga, gb, ba(0.0f), bb(0.0f);
      row.load_partial(i, n, xa, xb);
      load_chunk_partial<Arch, IL>(gp + i * g_step, n, ga, gb);
      if constexpr (HasBias)
        load_chunk_partial<Arch, IL>(bp + i, n, ba, bb);
      watch(seen, ga, gb, ba, bb);
      yo.store_partial(i, n, compute(xa, ga, ba), compute(xb, gb, bb));
    };
    // Partial chunks up to the output's first 64-byte boundary: then a streamed row writes whole
    // lines, and a stored one splits no register across two lines (core/tuning.hpp, peels).
    std::size_t i = 0;
    const std::size_t head = mode.peel ? min_of(end, elements_to_line(yo.address(0), sizeof(Out))) : 0;
    for (std::size_t k; i < head; i += k)
      partial(i, k = min_of(W2, head - i));
    constexpr bool Products = Fast && fp16_products<Knobs, Mid, W, Sink, Centered>;
    if constexpr (Fast && !Check && Sink::can_stream) {
      if (mode.stream) {  // whole lines streamed
#pragma GCC unroll 2
        for (; i + W2 <= end; i += W2) {
          if constexpr (Products) {
            full_fp16(i, yo, std::true_type{});
            row.prefetch_next(i);
          } else {
            B ra, rb;
            full(i, ra, rb, seen);
            row.prefetch_next(i);
            yo.template store<true, true>(i, ra, rb);
          }
        }
      }
    }
#pragma GCC unroll 2
    for (; i + W2 <= end; i += W2) {
      if constexpr (Products) {
        full_fp16(i, yo, std::false_type{});
      } else {
        B ra, rb;
        full(i, ra, rb, seen);
        if constexpr (Fast && Sink::prefetches_far_rows) {
          if (prefetch)
            row.prefetch_next(i);
        }
        yo.template store<Fast, false>(i, ra, rb);
      }
    }
    if (i < end)
      partial(i, end - i);
    if constexpr (Check) {
      if (xsimd::any(seen >= I(storage_traits<float>::exponent_mask)))  // NaN or +-Inf
        return false;
    }
    sink = yo;
    return true;
  };
  using yes = std::true_type;
  using no = std::false_type;
  const bool clean = clean_factor<Knobs>(factor) && (Centered || st.scale == 1.0f);
  auto run = [&](auto bias) NORMKIT_LAMBDA_ALWAYS_INLINE {
    if (NORMKIT_EXPECT(clean && mode.gains == gains_state::finite, true)) {
      loop(yes{}, bias, no{});
      return;
    }
    if constexpr (checks_gains_in_output<In, W, Out>) {
      if (clean && mode.gains == gains_state::unchecked) {
        if (loop(yes{}, bias, yes{})) {
          mode.gains = gains_state::finite;
          return;
        }
        mode.gains = gains_state::non_finite;
      }
    }
    loop(no{}, bias, no{});
  };
  if constexpr (Centered) {
    if (bp)
      run(yes{});
    else
      run(no{});
  } else {
    run(no{});
  }
}

// Where a normalizing op's rows are: `heads` rows per token (1 for a plain matrix), row (t, h) of
// x at x + t * x_stride + h * x_head_stride, of y likewise, with gains (and bias) at
// + h * gain_head_stride (0: one gain vector for every head). Head-wise norms (per-head Q/K norms
// over a packed QKV buffer) are rows of this kind, so they run the plain kernels.
struct row_layout {
  std::size_t heads, x_stride, x_head_stride, y_stride, y_head_stride, gain_head_stride;
};

// One field of an argument bundle, read by a load of its own width. The public entry stores the
// bundle field by field (constants merged into wider stores) just before the kernel reads it; a
// load spanning two of those stores cannot be forwarded and waits until both commit, behind every
// store of the previous call's output. g++ 12 read four fields of layout_of with one 32-byte load:
// 1 x 64 fp32 RMSNorm took 66 ns per call instead of 53. The empty asm wants each value in a
// general register, so no wider load serves two of them.
template <class T>
NORMKIT_ALWAYS_INLINE T scalar_field(const T& field) {
  T v = field;
#if defined(__GNUC__)
  __asm__("" : "+r"(v));
#endif
  return v;
}
template <class A>
row_layout layout_of(const A& a) {
  return {scalar_field(a.heads),    scalar_field(a.x_stride),      scalar_field(a.x_head_stride),
          scalar_field(a.y_stride), scalar_field(a.y_head_stride), scalar_field(a.gain_head_stride)};
}

// Visits rows in order without a division per row.
struct row_cursor {
  std::size_t t = 0, h = 0;
  void next(std::size_t heads) {
    if (++h == heads)
      h = 0, ++t;
  }
};

// The driver of a normalizing op: per row, statistics (Row::stats), one factor, the output pass
// (write_row). Row says what differs between ops: how a row's statistics are computed and whether
// its values are centered (ops/<op>_simd.hpp). rows counts every row (tokens x heads). stream: the
// dispatcher's decision for the whole call (the args' `stream`, dispatch/streaming.hpp), which this
// may be one thread-pool task of. ahead: a composite's next chunk (core/ahead.hpp), which the
// output pass of row r prefetches instead of row r + 1 (the chunk's rows are in cache), wherever
// it prefetches: streamed rows, and unstreamed ones of sinks that prefetch far rows.
template <class Arch, class Row, class Knobs, class In, class W, class Sink>
void norm_rows(const In* x, const W* gamma, const W* beta, Sink out, std::size_t rows, std::size_t cols,
               float eps, const row_layout& lay, bool stream, const rows_ahead& ahead = {}) {
  using B = typename shape<Arch>::batch;
  constexpr bool IL = Sink::interleaved;  // bf16 x and gains only (simd/chunk.hpp)
  constexpr std::size_t width = shape<Arch>::width;
  if (rows == 0 || cols == 0)
    return;
  const std::size_t row_bytes = cols * sizeof(In);
  const std::size_t out_row_bytes = cols * sizeof(typename Sink::out_type);
  write_mode mode{gains_state::unchecked, stream,
                  Sink::prefetches_far_rows && (ahead.at[0] || prefetches(rows * row_bytes, row_bytes)),
                  stream || peels(rows * out_row_bytes, out_row_bytes)};
  auto x_at = [&](row_cursor c) { return x + c.t * lay.x_stride + c.h * lay.x_head_stride; };
  // Rows go in groups: every row's statistics first, then one vector divide and square root give
  // all their factors, then the output passes. A short row's reduce -> divide -> sqrt -> divide
  // latency is then paid once per group (bench/README.md); rows are disjoint (validate.hpp), so
  // the order of reads and writes changes no bit. A group's input must still be in L1 when its
  // output pass reads it again.
  const std::size_t group = min_of(width, max_of<std::size_t>(1, group_max_bytes / row_bytes));
  row_stats st[width];
  alignas(64) float sums[width], epss[width], factors[width];
  for (std::size_t k = 0; k < width; ++k)
    sums[k] = 0.0f, epss[k] = 1.0f;  // lanes past the group's rows: a harmless factor
  // A group's rows, placed once for both passes: input, output offset, gain offset.
  struct placed {
    const In* x;
    std::size_t y, g;
  };
  placed row[width];
  row_cursor at;
  for (std::size_t r0 = 0; r0 < rows; r0 += group) {
    const std::size_t n = min_of(group, rows - r0);
    for (std::size_t k = 0; k < n; ++k, at.next(lay.heads)) {
      row[k] = {x_at(at), at.t * lay.y_stride + at.h * lay.y_head_stride, at.h * lay.gain_head_stride};
      st[k] = Row::template stats<Arch, IL>(plain_source<Arch, IL, In>{row[k].x, {}}, cols, eps);
      sums[k] = st[k].sum;
      epss[k] = st[k].eps;
    }
    // The row after the group (prefetched by the group's last output pass): the next group's
    // first, or the call's last row again.
    const In* const after = r0 + n < rows ? x_at(at) : row[n - 1].x;
    // contract: the factor from s (or var) and eps, per row. A lone row (decode) in scalar
    // registers: IEEE either way, and a 512-bit divide and square root have about twice the
    // latency, behind a vector load of just-stored floats that store forwarding cannot serve.
    if (n == 1)
      factors[0] = row_factor<Knobs, impl::scalar_ops>(st[0].sum, static_cast<float>(cols), st[0].eps);
    else
      row_factor<Knobs, simd_ops<Arch>>(B::load_aligned(sums), B(static_cast<float>(cols)),
                                        B::load_aligned(epss))
          .store_aligned(factors);
    // One gain set, written out of place: the first clean row checks the gains as it writes
    // (write_row). Otherwise a scan of every head's gains, after the first group's statistics so
    // they are the freshest lines in L1 when its output pass starts (docs/performance.md).
    if (r0 == 0) {
      const std::size_t gain_sets = lay.gain_head_stride ? lay.heads : 1;
      const bool in_place = out.address(0) == static_cast<const void*>(x);
      bool finite = true;
      if (gain_sets > 1 || in_place || !checks_gains_in_output<In, W, typename Sink::out_type>) {
        for (std::size_t h = 0; h < gain_sets; ++h)
          finite = finite && (!gamma || all_finite_bits<Arch>(gamma + h * lay.gain_head_stride, cols)) &&
                   (!beta || all_finite_bits<Arch>(beta + h * lay.gain_head_stride, cols));
        mode.gains = finite ? gains_state::finite : gains_state::non_finite;
      } else {
        mode.gains = gains_state::unchecked;
      }
    }
    for (std::size_t k = 0; k < n; ++k) {
      // Short rows: the next row's output lines into L1 while this row is written, so its stores
      // do not wait on their lines (core/tuning.hpp).
      if (!mode.stream && k + 1 < n && out_row_bytes <= prefetch_out_max_row_bytes)
        prefetch_bytes<Arch, true>(out.address(row[k + 1].y), out_row_bytes);
      Sink yr = out.at(row[k].y);
      if (st[k].nan_row) {
        yr.fill_nan(cols);
      } else {
        const std::size_t g = row[k].g;
        write_row<Arch, Row, Knobs, In, W>(
            plain_source<Arch, IL, In>{row[k].x,
                                       ahead.at[0] ? ahead_row<Arch>::of(ahead, r0 + k)
                                                   : ahead_row<Arch>::one(k + 1 < n ? row[k + 1].x : after)},
            gamma ? gamma + g : gamma, beta ? beta + g : beta, yr, cols, factors[k], st[k], mode);
      }
      out.merge(yr);
    }
  }
  if (mode.stream)
    arch_impl::store_fence<Arch>();
  out.finish();
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

NORMKIT_INTRINSICS_END

#include "../core/fp_precise_end.hpp"
