// SPDX-License-Identifier: MIT
// Parity: every ISA path returns exactly the bits of normkit::reference (docs/contract.md, the promise:
// "the same bits ... whatever the ISA, pointer alignment, row stride, number of rows, position of
// the row in the batch"). Every test is a TEST_P over the ISAs; it selects the ISA with set_isa,
// calls the public API (the dispatched path) and compares its output byte for byte with
// normkit::reference::* computed on contiguous copies of the same inputs. ISAs this CPU or build
// lacks are skipped visibly, and the summary printed at the end names what ran and what did not.
//
// The cross product is sampled, not enumerated: the full type sweep runs on a few column counts,
// the full column sweep on a few type combinations, and so on (see each test), so the binary runs
// in seconds per ISA. The harness (generators, layouts, poison checks, comparisons, and the per-op
// adapters that make every op of ops/list.hpp part of the sweep) is tests/parity.hpp.
#include <normkit/core/tuning.hpp>  // group_max_bytes, peel_min_bytes: cases on both sides
#include "parity.hpp"

#include <cstddef>  // std::size_t
#include <cstdio>   // std::printf
#include <cstring>  // std::memcpy
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <utility>  // std::pair
#include <vector>   // std::vector

namespace {

using namespace normkit_test;
using namespace normkit_test::parity;
using normkit::isa;
using rms = normkit::detail::rms_norm_op;
using ln = normkit::detail::layer_norm_op;
using cvt = normkit::detail::convert_op;

// contract: the ONNX LayerNormalization convention (a third rounding) is not modelled, so
// layer_norm<onnx> must not compile; the static_assert in layer_norm.hpp keys on this flag. (That
// the call really fails to compile needs a build-system check, not a test binary.)
static_assert(!normkit::onnx::layer_norm_exact && normkit::pytorch::layer_norm_exact,
              "layer_norm<onnx> must be rejected at compile time, the other presets accepted");

class Parity : public ::testing::TestWithParam<isa> {};

// ---- Every op x preset x type combination on a few column counts around the vector widths, every
// gain/bias presence, several generators.
void type_sweep_case(checker& c, const op_desc& op) {
  static const std::size_t cols_list[] = {1, 7, 64, 65, 300, 4097};
  // Multi-row calls group short rows (norm_rows): 3 rows of 300 columns must share a group and
  // rows of 4097 go one by one, whatever the storage type.
  static_assert(3 * 300 * sizeof(float) <= normkit::detail::group_max_bytes &&
                    4097 * sizeof(bf16) > normkit::detail::group_max_bytes,
                "type_sweep_case must cover both sides of group_max_bytes");
  static const gen gens[] = {{gen_kind::normal, 0},   {gen_kind::mean_shifted, 10},
                             {gen_kind::raw_bits, 0}, {gen_kind::normal, -30},
                             {gen_kind::huge, 0},     {gen_kind::exact_stats, 3}};
  int n = 0;
  for (std::size_t cols : cols_list)
    for (int v = 0; v < n_variants(op); ++v, ++n) {
      if (c.stop())
        return;
      spec s;
      s.rows = 3;
      s.cols = cols;
      s.eps = eps_values[n % 4];
      s.row_gen = gens[n % 6];
      apply_variant(s, v, n % 3 ? gain_kind::uniform : gain_kind::normal, gain_kind::normal);
      s.seed = c.next_seed();
      check(c, problem(op, s));
    }
}

// Every op of the op list, through its adapter's sweep (parity.hpp): each preset with every
// In/W/Out, or a representative subset of them.
TEST_P(Parity, EveryPresetAndTypeCombination) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "EveryPresetAndTypeCombination");
  for_each_op([&](auto op) {
    for_each_swept_desc<typename decltype(op)::type>([&](const op_desc& d) { type_sweep_case(c, d); });
  });
}

// ---- Every cols in 0..300 and the listed large ones, on a few type combinations.
const std::vector<std::size_t>& all_cols() {
  static const std::vector<std::size_t> v = [] {
    std::vector<std::size_t> r;
    for (std::size_t n = 0; n <= 300; ++n)
      r.push_back(n);
    for (std::size_t n :
         {511u, 512u, 513u, 1000u, 1024u, 2048u, 4095u, 4096u, 4097u, 5120u, 8192u, 11008u, 16384u, 65537u})
      r.push_back(n);
    return r;
  }();
  return v;
}

void cols_sweep(checker& c, const op_desc& op) {
  int n = 0;
  for (std::size_t cols : all_cols())
    for (int v = 0; v < n_variants(op); ++v, ++n) {
      if (c.stop())
        return;
      spec s;
      s.rows = 2;
      s.cols = cols;
      s.eps = eps_values[1 + n % 3];
      s.row_gen = n % 5 == 4 ? gen{gen_kind::mean_shifted, 8} : gen{gen_kind::normal, n % 7 - 3};
      apply_variant(s, v, gain_kind::normal, gain_kind::normal);
      s.seed = c.next_seed();
      check(c, problem(op, s));
    }
}

TEST_P(Parity, EveryColumnCount) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "EveryColumnCount");
  cols_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
  cols_sweep(c, desc<rms, normkit::olmo2, float, float, float>());
  cols_sweep(c, desc<rms, normkit::gemma3n, fp16, float, fp16>());
  cols_sweep(c, desc<rms, normkit::t5, float, bf16, float>());
  cols_sweep(c, desc<ln, normkit::pytorch, bf16, bf16, bf16>());
  cols_sweep(c, desc<ln, normkit::pytorch, float, float, float>());
  cols_sweep(c, desc<ln, normkit::llama, fp16, fp16, fp16>());
  cols_sweep(c, desc<ln, normkit::gemma, float, bf16, bf16>());
  cols_sweep(c, desc<cvt, no_policy, float, bf16>());
  cols_sweep(c, desc<cvt, no_policy, fp16, float>());
}

// ---- Every element misalignment within 64 bytes of x and y (all pairs), gamma and beta (every
// value, tied to the x/y offsets), on column counts around the vector widths. Then calls big
// enough that a row starting inside a line is written up to its first line boundary in partial
// chunks (core/tuning.hpp, peels: rows at the threshold, and past it with a partial tail), at
// every y offset (x's tied to it: the rows are long).
void misalignment_sweep(checker& c, const op_desc& op) {
  using normkit::detail::peel_min_bytes;
  using normkit::detail::peel_min_row_bytes;
  const std::size_t peel_cols = peel_min_row_bytes / size_of(op.out);
  const std::size_t cols_list[] = {1, 3, 8, 9, 17, 31, 64, 65, 100, 257, peel_cols, peel_cols + 37};
  static_assert(peel_min_bytes % peel_min_row_bytes == 0, "whole rows reach peel_min_bytes");
  const std::size_t nx = 64 / size_of(op.in), ny = 64 / size_of(op.out), nw = 64 / size_of(op.w);
  for (std::size_t cols : cols_list) {
    const bool peeled = cols >= peel_cols;
    spec s;
    s.rows = peeled ? peel_min_bytes / peel_min_row_bytes : 2;
    s.cols = cols;
    s.row_gen = {gen_kind::normal, 0};
    s.gamma = gain_kind::normal;
    s.beta = gain_kind::normal;
    s.seed = c.next_seed();
    const problem p(op, s);
    for (std::size_t kx = 0; kx < nx; ++kx)
      for (std::size_t ky = 0; ky < ny; ++ky) {
        if (c.stop())
          return;
        if (peeled && kx != (5 * ky + 1) % nx)
          continue;
        layout l;
        l.x_off = kx;
        l.y_off = ky;
        l.g_off = (kx + 2 * ky) % nw;
        l.b_off = (3 * kx + ky + 1) % nw;
        check(c, p, l);
      }
  }
}

TEST_P(Parity, EveryMisalignment) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "EveryMisalignment");
  misalignment_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
  misalignment_sweep(c, desc<rms, normkit::gemma, float, float, float>());
  misalignment_sweep(c, desc<rms, normkit::t5, fp16, bf16, float>());
  misalignment_sweep(c, desc<ln, normkit::pytorch, float, bf16, fp16>());
  misalignment_sweep(c, desc<ln, normkit::round_twice, bf16, float, bf16>());
  misalignment_sweep(c, desc<cvt, no_policy, bf16, fp16>());
  misalignment_sweep(c, desc<cvt, no_policy, float, fp16>());
}

// ---- Row strides: x and y strides independent, gaps poisoned (NaN in x, a marker in y); the
// kernels must neither read x's gaps into a row nor write y's.
void stride_sweep(checker& c, const op_desc& op) {
  static const std::size_t rows_list[] = {1, 2, 5, 17};
  static const std::size_t cols_list[] = {1, 7, 64, 65, 300, 4097};
  static const std::size_t gaps[] = {0, 1, 3, 16, 61};
  for (std::size_t rows : rows_list)
    for (std::size_t cols : cols_list) {
      spec s;
      s.rows = rows;
      s.cols = cols;
      s.row_gen = {gen_kind::mixed, 0};
      s.gamma = gain_kind::normal;
      s.beta = gain_kind::normal;
      s.seed = c.next_seed();
      const problem p(op, s);
      for (std::size_t gx : gaps)
        for (std::size_t gy : gaps) {
          if (c.stop())
            return;
          layout l;
          l.x_stride = cols + gx;
          l.y_stride = cols + gy;
          l.x_off = gx % 5;
          l.y_off = gy % 3;
          check(c, p, l);
        }
      layout wide;  // a stride of several rows
      wide.x_stride = 3 * cols + 5;
      wide.y_stride = 2 * cols + 1;
      check(c, p, wide);
    }
}

TEST_P(Parity, RowStridesLeaveGapsUntouched) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "RowStridesLeaveGapsUntouched");
  stride_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
  stride_sweep(c, desc<rms, normkit::gemma3n, float, float, bf16>());
  stride_sweep(c, desc<ln, normkit::pytorch, fp16, float, fp16>());
  stride_sweep(c, desc<ln, normkit::t5, float, bf16, float>());
}

// ---- Batch invariance: a probe row gives the same bits alone and at the start, middle and end
// of batches of 1, 3, 64 and 1000 rows among NaN, overflow, zero and shifted rows.
void batch_sweep(checker& c, const op_desc& op) {
  static const std::size_t rows_list[] = {1, 3, 64, 1000};
  static const std::size_t cols_list[] = {1, 33, 64, 100, 1000, 4096};
  for (std::size_t rows : rows_list)
    for (std::size_t cols : cols_list) {
      if (c.stop())
        return;
      if (rows * cols > 300 * 1000)  // time, not coverage: 1000 rows of 100, 64 rows of 4096 run
        continue;
      spec s;
      s.rows = rows;
      s.cols = cols;
      s.row_gen = {gen_kind::mixed, 0};
      s.gamma = gain_kind::normal;
      s.beta = gain_kind::normal;
      s.seed = c.next_seed();
      problem batch(op, s);

      spec one = s;
      one.rows = 1;
      one.row_gen = {gen_kind::normal, 2};
      problem probe(op, one);
      probe.gamma = batch.gamma;  // the batch's gains and biases
      probe.beta = batch.beta;
      probe.compute_reference();
      check(c, probe);  // alone

      std::vector<std::size_t> positions = {0};
      if (rows / 2 != 0)
        positions.push_back(rows / 2);
      if (rows - 1 != rows / 2 && rows - 1 != 0)
        positions.push_back(rows - 1);
      for (std::size_t pos : positions) {
        // The reference is row-wise by definition, so the expected batch is the background's
        // reference rows with the probe's reference row at `pos`.
        const problem saved = batch;
        batch.x.copy_in(pos * cols, probe.x, 0, cols);
        batch.want.copy_in(pos * cols, probe.want, 0, cols);
        batch.s.row_gen = {gen_kind::mixed, static_cast<int>(pos)};  // names the probe position in messages
        check(c, batch);
        if (pos == rows / 2) {
          layout l;  // the same batch strided and misaligned
          l.x_stride = cols + 3;
          l.y_stride = cols + 1;
          l.x_off = 1;
          l.y_off = 5;
          check(c, batch, l);
        }
        batch = saved;
      }
    }
}

TEST_P(Parity, SameRowSameBitsAtAnyBatchPosition) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "SameRowSameBitsAtAnyBatchPosition");
  batch_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
  batch_sweep(c, desc<rms, normkit::gemma, float, float, float>());
  batch_sweep(c, desc<ln, normkit::pytorch, bf16, float, bf16>());
  batch_sweep(c, desc<ln, normkit::round_twice, fp16, fp16, float>());
}

// ---- Calls whose output reaches stream_min_bytes() take the streaming-store loop (a peeled head
// up to a 64-byte boundary, whole lines streamed, the next row prefetched, one fence per call):
// the same bits and nothing written outside the rows, for y at any element offset, between NaN,
// overflow and zero rows (eps = 0 too), with gains that send rows to the general loop. The
// threshold is the machine's (a quarter of its last-level cache), so these cases pin their own.
constexpr std::size_t streaming_sweep_threshold = std::size_t(1) << 20;

// The case written in place (y == x), when the op's input and output types allow it.
void check_in_place(checker& c, const problem& p) {
  if (p.op->in == p.op->out) {
    layout l;
    l.in_place = true;
    check(c, p, l);
  }
}

void streaming_sweep(checker& c, const op_desc& op) {
  const std::size_t cols = 4096 + 37;  // a tail chunk too
  const std::size_t rows = streaming_sweep_threshold / (cols * size_of(op.out)) + 1;
  static const std::pair<gain_kind, float> gains_eps[] = {{gain_kind::normal, 1e-6f},
                                                          {gain_kind::raw_bits, 0.0f}};
  for (const auto& ge : gains_eps) {
    spec s;
    s.rows = rows;
    s.cols = cols;
    s.eps = ge.second;
    s.row_gen = {gen_kind::mixed, 0};
    s.gamma = ge.first;
    s.beta = gain_kind::normal;
    s.seed = c.next_seed();
    const problem p(op, s);
    for (std::size_t y_off : {std::size_t{0}, std::size_t{7}}) {
      if (c.stop())
        return;
      layout l;
      l.x_off = 3;
      l.y_off = y_off;
      l.y_stride = y_off ? cols + 5 : 0;
      check(c, p, l);
    }
    check_in_place(c, p);
  }
}

TEST_P(Parity, StreamingStoresOnLargeOutputs) {
  NORMKIT_USE_ISA(GetParam());
  if (GetParam() == isa::scalar)
    GTEST_SKIP() << "the scalar path is the reference; it has no streaming loop";
  checker c(GetParam(), "StreamingStoresOnLargeOutputs");
  const std::size_t machine_threshold = normkit::stream_min_bytes();
  normkit::set_stream_min_bytes(streaming_sweep_threshold);
  streaming_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
  streaming_sweep(c, desc<ln, normkit::pytorch, bf16, bf16, bf16>());
  streaming_sweep(c, desc<rms, normkit::gemma, fp16, fp16, fp16>());
  streaming_sweep(c, desc<ln, normkit::pytorch, float, float, float>());
  normkit::set_stream_min_bytes(machine_threshold);
}

// ---- In place (y == x, same type and stride): the same bits as out of place.
void in_place_sweep(checker& c, const op_desc& op) {
  static const std::size_t cols_list[] = {1, 7, 8, 9, 63, 64, 65, 300, 4097};
  int n = 0;
  for (std::size_t cols : cols_list)
    for (int v = 0; v < n_variants(op); ++v, ++n) {
      if (c.stop())
        return;
      spec s;
      s.rows = 3;
      s.cols = cols;
      s.eps = eps_values[n % 4];
      s.row_gen = {gen_kind::mixed, 0};
      apply_variant(s, v, gain_kind::normal, gain_kind::normal);
      s.seed = c.next_seed();
      const problem p(op, s);
      layout l;
      l.in_place = true;
      check(c, p, l);
      l.x_off = static_cast<std::size_t>(n) % (64 / size_of(op.in));
      l.x_stride = l.y_stride = cols + 5;  // strided in place: the gaps stay untouched
      check(c, p, l);
    }
  spec s;  // one row: in place is allowed whatever the strides
  s.cols = 77;
  s.seed = c.next_seed();
  const problem p(op, s);
  layout l;
  l.in_place = true;
  l.x_stride = 100;
  l.y_stride = 77;
  check(c, p, l);
}

TEST_P(Parity, InPlace) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "InPlace");
  in_place_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
  in_place_sweep(c, desc<rms, normkit::gemma, bf16, float, bf16>());
  in_place_sweep(c, desc<rms, normkit::gemma3n, float, float, float>());
  in_place_sweep(c, desc<rms, normkit::t5, fp16, bf16, fp16>());
  in_place_sweep(c, desc<ln, normkit::pytorch, float, float, float>());
  in_place_sweep(c, desc<ln, normkit::pytorch, bf16, bf16, bf16>());
  in_place_sweep(c, desc<ln, normkit::round_twice, fp16, float, fp16>());
  in_place_sweep(c, desc<cvt, no_policy, fp16, fp16>());
}

// ---- Value generators x eps: N(0, 2^k) for every k in [-60, 60], shifted, exact-stat, constant,
// raw-bit, overflow and zero rows, each with eps in {0, 1e-6, 1e-5, 1}.
const std::vector<gen>& value_gens() {
  static const std::vector<gen> v = [] {
    std::vector<gen> r;
    for (int k = -60; k <= 60; ++k)
      r.push_back({gen_kind::normal, k});
    for (int k : {0, 4, 8, 12, 16, 20, 24, 40, 60, 100})
      r.push_back({gen_kind::mean_shifted, k});
    for (int k = 0; k < 6; ++k)
      r.push_back({gen_kind::exact_stats, k});
    for (int k : {-70, -20, 0, 10, 60})
      r.push_back({gen_kind::constant, k});
    for (int k = 0; k < 4; ++k)
      r.push_back({gen_kind::raw_bits, k});
    for (int k = 0; k < 4; ++k)
      r.push_back({gen_kind::finite_raw_bits, k});
    for (int k = 0; k < 3; ++k)
      r.push_back({gen_kind::huge, k});
    for (int k = 0; k < 4; ++k)
      r.push_back({gen_kind::one_huge, k});
    for (int k = 0; k < 3; ++k)
      r.push_back({gen_kind::extremes, k});
    for (int k = 0; k < 2; ++k)
      r.push_back({gen_kind::huge_mean_shifted, k});
    for (int k = 0; k < 2; ++k)
      r.push_back({gen_kind::zero, k});
    return r;
  }();
  return v;
}

void value_sweep(checker& c, const op_desc& op) {
  static const std::size_t cols_list[] = {1, 2, 5, 64, 67, 256, 1031};
  int n = 0;
  for (const gen& g : value_gens())
    for (float eps : eps_values)
      for (std::size_t cols : cols_list) {
        if (c.stop())
          return;
        ++n;
        spec s;
        s.rows = 2;
        s.cols = cols;
        s.eps = eps;
        s.row_gen = g;
        apply_variant(s, n % n_variants(op), n % 3 ? gain_kind::uniform : gain_kind::normal,
                      gain_kind::normal);
        s.seed = c.next_seed();
        check(c, problem(op, s));
      }
}

TEST_P(Parity, ValueGeneratorsAndEps) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "ValueGeneratorsAndEps");
  value_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
  value_sweep(c, desc<rms, normkit::olmo2, float, float, float>());
  value_sweep(c, desc<rms, normkit::gemma3n, float, float, fp16>());
  value_sweep(c, desc<rms, normkit::t5, fp16, bf16, float>());
  value_sweep(c, desc<rms, normkit::gemma, bf16, float, bf16>());
  value_sweep(c, desc<ln, normkit::pytorch, float, float, float>());
  value_sweep(c, desc<ln, normkit::pytorch, bf16, bf16, bf16>());
  value_sweep(c, desc<ln, normkit::gemma3n, fp16, fp16, fp16>());
  value_sweep(c, desc<ln, normkit::round_twice, bf16, float, fp16>());
  value_sweep(c, desc<cvt, no_policy, float, fp16>());
  value_sweep(c, desc<cvt, no_policy, float, bf16>());
}

// ---- Gains and biases with NaN/Inf/subnormal columns, huge gains (fp16 outputs overflow),
// 1 + gamma == 0 columns, under rows of every kind.
void gain_sweep(checker& c, const op_desc& op) {
  static const std::size_t cols_list[] = {1, 9, 64, 100, 1031};
  static const gain_kind gammas[] = {gain_kind::raw_bits, gain_kind::large, gain_kind::specials,
                                     gain_kind::none};
  static const gain_kind betas[] = {gain_kind::raw_bits, gain_kind::large, gain_kind::specials,
                                    gain_kind::normal, gain_kind::none};
  int n = 0;
  for (std::size_t cols : cols_list)
    for (gain_kind gk : gammas)
      for (gain_kind bk : betas) {
        if (c.stop())
          return;
        if (!op.has_beta && bk != gain_kind::none)
          continue;
        spec s;
        s.rows = 11;  // one row of each kind of the mix
        s.cols = cols;
        s.eps = eps_values[n++ % 4];
        s.row_gen = {gen_kind::mixed, 0};
        s.gamma = gk;
        s.beta = bk;
        s.seed = c.next_seed();
        check(c, problem(op, s));
      }
}

TEST_P(Parity, SpecialGainsAndBiases) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "SpecialGainsAndBiases");
  gain_sweep(c, desc<rms, normkit::gemma, bf16, bf16, bf16>());
  gain_sweep(c, desc<rms, normkit::llama, float, float, fp16>());
  gain_sweep(c, desc<rms, all_knobs, bf16, fp16, fp16>());
  gain_sweep(c, desc<ln, normkit::pytorch, float, float, fp16>());
  gain_sweep(c, desc<ln, normkit::gemma, bf16, bf16, bf16>());
  gain_sweep(c, desc<ln, all_knobs, fp16, bf16, float>());
}

// ---- One NaN or Inf among finite gains (or biases), at the row's first, middle or last column,
// behind a clean first row, a NaN first row (the check falls to the next clean row), in place (the
// gains are scanned: a rewrite would read y) and streamed. The first clean row writes while it
// checks the gains and is written again when one is not finite (simd/rows.hpp, write_row). The NaN
// is negative with a payload, which the fast loop (no NaN selects) carries to the output where
// the reference writes the canonical NaN: a kernel that missed the gain, or kept the first pass,
// differs in every row.
void set_value(any_vec& v, std::size_t k, float value) {
  visit(v.type(), [&](auto t) {
    using T = typename decltype(t)::type;
    const T e = as<T>(value);
    std::memcpy(v.at(k), &e, sizeof e);
  });
}

void set_payload_nan(any_vec& v, std::size_t k) {
  visit(v.type(), [&](auto t) {
    using T = typename decltype(t)::type;
    const T e = from_bits<T>(sizeof(T) == 4 ? 0xffc01234u : std::is_same<T, bf16>::value ? 0xffc1u : 0xfe21u);
    std::memcpy(v.at(k), &e, sizeof e);
  });
}

void one_non_finite_gain_sweep(checker& c, const op_desc& op) {
  static const std::size_t cols_list[] = {1, 17, 100, 4133};
  static const float infinities[] = {std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity()};
  int n = 0;
  for (std::size_t cols : cols_list)
    for (std::size_t at : {std::size_t{0}, cols / 2, cols - 1})
      for (const bool in_beta : {false, true})
        for (const bool nan_first_row : {false, true}) {
          if (c.stop())
            return;
          if (in_beta && !op.has_beta)
            continue;
          spec s;
          s.rows = 3;
          s.cols = cols;
          s.eps = eps_values[n % 4];
          s.row_gen = {gen_kind::normal, 0};
          s.gamma = gain_kind::normal;
          s.beta = op.has_beta ? gain_kind::normal : gain_kind::none;
          s.seed = c.next_seed();
          problem p(op, s);
          if (n++ % 3 == 0)
            set_payload_nan(in_beta ? p.beta : p.gamma, at);
          else
            set_value(in_beta ? p.beta : p.gamma, at, infinities[n % 2]);
          if (nan_first_row)
            set_value(p.x, cols / 3, std::numeric_limits<float>::quiet_NaN());
          p.compute_reference();
          check(c, p);
          check_in_place(c, p);
        }
}

TEST_P(Parity, OneNonFiniteGainOrBias) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "OneNonFiniteGainOrBias");
  const std::size_t machine_threshold = normkit::stream_min_bytes();
  for (const std::size_t threshold : {machine_threshold, std::size_t{1024}}) {  // 1024: every call streams
    normkit::set_stream_min_bytes(threshold);
    one_non_finite_gain_sweep(c, desc<rms, normkit::llama, bf16, bf16, bf16>());
    one_non_finite_gain_sweep(c, desc<rms, normkit::gemma, float, float, float>());  // checked in the output
    one_non_finite_gain_sweep(c, desc<rms, normkit::llama, float, float, fp16>());   // scanned
    one_non_finite_gain_sweep(c, desc<ln, normkit::pytorch, bf16, bf16, bf16>());
    one_non_finite_gain_sweep(c, desc<ln, normkit::pytorch, float, float, float>());
    one_non_finite_gain_sweep(c, desc<ln, normkit::gemma, fp16, float, fp16>());
  }
  normkit::set_stream_min_bytes(machine_threshold);
}

// ---- The nullptr-literal overloads (W deduced as In) run the same kernels as typed nulls.
TEST_P(Parity, NullptrOverloads) {
  NORMKIT_USE_ISA(GetParam());
  checker c(GetParam(), "NullptrOverloads");
  using normkit::status;
  rng r(7);
  for (std::size_t cols : {1u, 65u, 1000u}) {
    const std::size_t rows = 3;
    const auto x = normal_vec<bf16>(r, rows * cols);
    const auto g = normal_vec<bf16>(r, cols);
    std::vector<bf16> want(rows * cols), got(rows * cols);
    const bf16* none = nullptr;
    const std::string at = " cols=" + std::to_string(cols);
    auto same = [&](const char* what) {
      c.same(dtype_of<bf16>(), got.data(), want.data(), got.size(), [&] { return what + at; });
    };
    ASSERT_EQ(normkit::reference::rms_norm<normkit::t5>(x.data(), none, want.data(), rows, cols, 1e-5f),
              status::ok);
    ASSERT_EQ(normkit::rms_norm<normkit::t5>(x.data(), nullptr, got.data(), rows, cols, 1e-5f), status::ok);
    same("rms_norm<t5>(x, nullptr, y)");
    ASSERT_EQ(normkit::rms_norm<normkit::t5>(x.data(), nullptr, got.data(), rows, cols, 1e-5f, cols, cols),
              status::ok);
    same("rms_norm<t5>(x, nullptr, y, strides)");

    ASSERT_EQ(normkit::reference::layer_norm<normkit::pytorch>(x.data(), none, none, want.data(), rows, cols,
                                                               1e-5f),
              status::ok);
    ASSERT_EQ(
        normkit::layer_norm<normkit::pytorch>(x.data(), nullptr, nullptr, got.data(), rows, cols, 1e-5f),
        status::ok);
    same("layer_norm<pytorch>(x, nullptr, nullptr, y)");
    ASSERT_EQ(normkit::reference::layer_norm<normkit::pytorch>(x.data(), none, g.data(), want.data(), rows,
                                                               cols, 1e-5f),
              status::ok);
    ASSERT_EQ(
        normkit::layer_norm<normkit::pytorch>(x.data(), nullptr, g.data(), got.data(), rows, cols, 1e-5f),
        status::ok);
    same("layer_norm<pytorch>(x, nullptr, beta, y)");
    ASSERT_EQ(normkit::reference::layer_norm<normkit::pytorch>(x.data(), g.data(), none, want.data(), rows,
                                                               cols, 1e-5f),
              status::ok);
    ASSERT_EQ(
        normkit::layer_norm<normkit::pytorch>(x.data(), g.data(), nullptr, got.data(), rows, cols, 1e-5f),
        status::ok);
    same("layer_norm<pytorch>(x, gamma, nullptr, y)");
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, Parity, ::testing::ValuesIn(all_isas()), isa_param_name);

// Names, at the end of the run, the ISAs that ran (cases compared, time) and those skipped.
class summary : public ::testing::Environment {
 public:
  void TearDown() override {
    for (isa i : all_isas()) {
      const tally& t = totals(i);
      if (!normkit::isa_available(i))
        std::printf("[ parity   ] %-6s SKIPPED: not available on this CPU/build\n", normkit::to_string(i));
      else if (t.tests == 0)
        std::printf("[ parity   ] %-6s not run (filtered out)\n", normkit::to_string(i));
      else
        std::printf(
            "[ parity   ] %-6s ran %d tests: %llu cases compared bit for bit, %.1f M outputs, %.2f s\n",
            normkit::to_string(i), t.tests, static_cast<unsigned long long>(t.cases),
            static_cast<double>(t.outputs) * 1e-6, t.seconds);
    }
  }
};

[[maybe_unused]] ::testing::Environment* const summary_env = ::testing::AddGlobalTestEnvironment(new summary);

}  // namespace
